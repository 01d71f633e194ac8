import { postJson } from '../lib/memgate.ts';
import { EventTally, type ExtractionTotals } from '../load/event-tally.ts';
import { WsRpc } from '../load/ws-rpc.ts';
import type { ExtractionReport } from '../../src/service/api.ts';
import { sessionsOf, speakersOf, type LocomoSample } from './dataset.ts';

/**
 * How LoCoMo's two speakers map onto memgate roles. memgate is built for a
 * caller and an agent; in LoCoMo both speakers are people whose facts are asked
 * about. `user-agent` maps speaker_a → user and speaker_b → agent (names kept in
 * `speaker`); `both-user` sends both as role user with their names.
 */
export type RoleMode = 'user-agent' | 'both-user';

/** What streaming one conversation did. */
export interface StreamReport {
  sessions: number;
  turns: number;
  flushes: ExtractionReport[];
  appendErrors: number;
  /** Ack latency of every append as the client saw it (a session's appends are sent pipelined). */
  appendMs: number[];
  /** Every extraction of this user (after `end` by a worker, and by the flushes), from live events. */
  extraction: ExtractionTotals;
}

/**
 * Stream a conversation through the gateway as one memgate user: one WebSocket
 * call per LoCoMo session (sessionId = `<sample>-S<n>`), every turn appended with
 * its dia_id as turnId and its world time, `end`, then an HTTP flush (the call's
 * end made synchronous so the next session starts from committed memory). `onSession` runs
 * after each session's flush, before the next session starts.
 */
export async function streamConversation(url: string, wsUrl: string, agentId: string, sample: LocomoSample, roles: RoleMode, onSession?: (n: number) => void | Promise<void>): Promise<StreamReport> {
  const [speakerA] = speakersOf(sample);
  const userId = sample.sample_id;
  const tally = await EventTally.open(wsUrl, agentId);
  const report: StreamReport = { sessions: 0, turns: 0, flushes: [], appendErrors: 0, appendMs: [], extraction: tally.totals };
  try {
    for (const session of sessionsOf(sample)) {
      const rpc = await WsRpc.connect(wsUrl);
      try {
        await rpc.request({ op: 'start', agentId, userId, sessionId: `${userId}-S${session.index}` });
        const acks = session.turns.map((t) => {
          const sent = performance.now();
          return rpc.request({ op: 'append', role: roles === 'both-user' || t.speaker === speakerA ? 'user' : 'agent', speaker: t.speaker, text: t.text, turnId: t.diaId, ts: t.ts }).then(
            () => void report.appendMs.push(performance.now() - sent),
            () => {
              report.appendErrors += 1;
            },
          );
        });
        await Promise.all(acks);
        await rpc.request({ op: 'end' });
      } finally {
        await rpc.close();
      }
      report.flushes.push(await postJson<ExtractionReport>(`${url}/v1/agents/${encodeURIComponent(agentId)}/users/${encodeURIComponent(userId)}/flush`, {}));
      report.sessions += 1;
      report.turns += session.turns.length;
      await onSession?.(report.sessions);
    }
    report.extraction = await tally.settle();
  } finally {
    await tally.close();
  }
  return report;
}
