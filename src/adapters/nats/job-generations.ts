import type { JetStreamClient, KV } from 'nats';
import { MemgateError } from '../../core/errors.ts';

/**
 * Per-user job generation: the part of the publish `msgID` that lets JetStream
 * dedup a job while it is pending but not after a worker took it.
 *
 * Scheme: msgID = `<user hash>#<generation>`. A worker that takes a job raises
 * the user's generation to that message's stream sequence *before* its handler
 * reads the turn buffer. Hence:
 * - a publish that reuses the msgID of a job nobody took yet is dropped by the
 *   stream's duplicate window: that pending job will read the new turns anyway;
 * - a publish that read the generation after a take uses a new msgID and is
 *   queued: the running job may have read the buffer before the new turns;
 * - a publish dropped against a job taken meanwhile read the generation before
 *   the take, so its turns were appended before that job read the buffer.
 * Generations only grow (compare-and-set on the KV revision, max wins): a late
 * redelivery of an old message cannot lower it back onto a taken job's msgID.
 * The bucket reads from the stream leader (allow_direct off) so a read never
 * sees a stale value. Entries expire after `ttlMs` of inactivity; that is far
 * beyond the duplicate window, so an expired generation only risks one extra job.
 */
export class JobGenerations {
  private constructor(private readonly kv: KV) {}

  /** Opens (or creates) the bucket. */
  static async open(js: JetStreamClient, bucket: string, ttlMs: number): Promise<JobGenerations> {
    const kv = await js.views.kv(bucket, { history: 1, allow_direct: false, ttl: ttlMs });
    return new JobGenerations(kv);
  }

  /** The user's current generation (0 before the first take). */
  async current(key: string): Promise<number> {
    const entry = await this.kv.get(key);
    if (entry === null || entry.length === 0) return 0;
    const value = Number(entry.string());
    return Number.isFinite(value) ? value : 0;
  }

  /** Raises the user's generation to at least `to` (no-op when already there). */
  async advance(key: string, to: number): Promise<void> {
    for (let attempt = 0; attempt < 16; attempt++) {
      const entry = await this.kv.get(key);
      try {
        if (entry === null || entry.length === 0) {
          await this.kv.create(key, String(to));
          return;
        }
        if (Number(entry.string()) >= to) return;
        await this.kv.update(key, String(to), entry.revision);
        return;
      } catch (err) {
        // Another worker moved the key between our read and write: read again.
        if (err instanceof Error && /wrong last sequence/i.test(err.message)) continue;
        throw err;
      }
    }
    throw new MemgateError('conflict', `job generation of ${key} kept changing`);
  }
}
