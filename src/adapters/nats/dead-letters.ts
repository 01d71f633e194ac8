import { headers, type JetStreamClient, type JetStreamManager, type NatsConnection, type Subscription } from 'nats';
import type { Logger } from '../../core/logger.ts';
import type { BusTopology } from './jetstream-setup.ts';

/** Why and after how many deliveries a job was dead-lettered. */
export interface DeadLetterReason {
  attempts: number;
  /** Stable error code (MemgateError code) or `max_deliver` when a worker died on the last attempt. */
  code: string;
  /** Error message, one line, for operators (never user text: errors carry ids and codes only). */
  message: string;
}

/** Header values must be single-line; long messages are cut. */
function headerValue(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').slice(0, 500);
}

/**
 * Publishes the job's payload to `<prefix>.dlq.<tenant>.<agent>.<user>`. The
 * msgID is the job's stream sequence, so the worker path and the advisory path
 * racing on one message still leave one dead letter.
 */
export async function publishDeadLetter(js: JetStreamClient, t: BusTopology, jobSubject: string, sourceSeq: number, data: Uint8Array, reason: DeadLetterReason): Promise<void> {
  const h = headers();
  h.set('Memgate-Attempts', String(reason.attempts));
  h.set('Memgate-Error-Code', headerValue(reason.code));
  h.set('Memgate-Error', headerValue(reason.message));
  h.set('Memgate-Source-Seq', String(sourceSeq));
  const dlqSubject = `${t.subjectPrefix}.dlq.${jobSubject.split('.').slice(-3).join('.')}`;
  await js.publish(dlqSubject, data, { msgID: `${t.stream}:${sourceSeq}`, headers: h });
}

interface MaxDeliveriesAdvisory {
  stream_seq?: number;
  deliveries?: number;
}

/**
 * Moves jobs whose deliveries ran out without an ack or term (the worker died
 * or hung on the last attempt) to the dead-letter stream. JetStream leaves such
 * a message in a work-queue stream forever and announces it once on
 * `$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.<stream>.<consumer>`; a queue
 * group makes one listener per cluster handle it. Advisories are core NATS:
 * one emitted while no process listens is missed (the job then stays in the
 * stream, visible as stream messages above consumer depth).
 */
export function listenForExhaustedJobs(nc: NatsConnection, jsm: JetStreamManager, js: JetStreamClient, t: BusTopology, log: Logger): Subscription {
  const subject = `$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${t.stream}.${t.consumer}`;
  return nc.subscribe(subject, {
    queue: `${t.stream}_dlq`,
    callback: (err, msg) => {
      if (err) return;
      let advisory: MaxDeliveriesAdvisory;
      try {
        advisory = msg.json<MaxDeliveriesAdvisory>();
      } catch {
        return;
      }
      const seq = advisory.stream_seq;
      if (typeof seq !== 'number') return;
      void moveToDeadLetters(jsm, js, t, seq, advisory.deliveries ?? 0).catch((e: unknown) => log.warn('dead-lettering an exhausted job failed', { seq, err: e }));
    },
  });
}

async function moveToDeadLetters(jsm: JetStreamManager, js: JetStreamClient, t: BusTopology, seq: number, attempts: number): Promise<void> {
  const stored = await jsm.streams.getMessage(t.stream, { seq }).catch(() => null);
  // Already acked, termed or moved by another listener.
  if (stored === null) return;
  await publishDeadLetter(js, t, stored.subject, seq, stored.data, { attempts, code: 'max_deliver', message: 'deliveries exhausted without an ack' });
  await jsm.streams.deleteMessage(t.stream, seq);
}
