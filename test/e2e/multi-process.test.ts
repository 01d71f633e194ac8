/**
 * The production stack under a worker crash: one gateway and two worker
 * processes on real Redis and NATS (documents, cold archive and ACUs in one
 * shared SQLite file), 50 users streaming turns. Worker A's LLM holds every
 * request after its first few answers, so A is provably mid-extraction (user
 * lock held, nothing written yet) when it gets SIGKILL; streaming goes on,
 * every call ends, worker B drains the work. Then: every acked turn is archived
 * or still buffered (never both, never lost), no window was committed twice, no
 * ACU is duplicated, and B redid what A had in flight.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect, type NatsConnection } from 'nats';
import type { Redis } from 'ioredis';
import { MemgateClient } from '../../src/client/index.ts';
import type { Scope } from '../../src/core/types.ts';
import { JetStreamJobBus } from '../../src/adapters/nats/index.ts';
import { createRedis } from '../../src/adapters/redis/index.ts';
import { describeWithServer } from '../support/servers.ts';
import { startGatewayProcess, startWorkerProcess, tail, type MemgateProcess } from '../support/processes.ts';
import { sleep, waitFor } from '../support/wait.ts';
import { StackState, type UserState } from './support/stack-state.ts';
import { startWindowLlm, type WindowLlm } from './support/window-llm.ts';
import { removeDir } from '../support/tmp.ts';
import { writeRedisNatsProfile } from '../support/stack-profile.ts';
import { dropRunData } from './support/run-data.ts';

const USERS = 50;
const TURNS = 30;
/** Users wait before this turn until worker A is dead, so turns provably keep streaming after the kill. */
const KILL_AT_TURN = 18;
const MAX_KEPT_TURNS = 8;
const WORDS =
  'apple river stone cloud garden window bridge candle marble forest violin harbor lantern meadow copper saddle thunder orchid glacier pepper compass velvet anchor falcon canyon tulip ember quartz ribbon summit walnut harvest beacon cobalt lagoon maple pebble tiger willow zephyr'.split(
    ' ',
  );

/** ~20 tokens of random words: the 200-token threshold fires every ~10 turns, and no two ACUs look alike. */
function turnText(): string {
  return Array.from({ length: 12 }, () => WORDS[Math.floor(Math.random() * WORDS.length)]).join(' ');
}

/** The invariants for one user once the work is drained. */
function expectConsistent(who: string, sent: ReadonlySet<string>, s: UserState): void {
  const archived = new Set(s.archived);
  // Every acked turn is extracted (archived) or still hot; never both, never unknown, archived once.
  expect(s.archived.length, `${who}: one cold row per archived turn`).toBe(archived.size);
  expect(
    s.buffered.filter((id) => archived.has(id)),
    `${who}: turns both archived and buffered`,
  ).toEqual([]);
  expect(new Set([...s.archived, ...s.buffered]), `${who}: archived ∪ buffered = acked`).toEqual(sent);
  // A window committed twice would count its turns twice.
  expect(s.doc, `${who}: hot document`).not.toBeNull();
  expect(s.doc!.counters.turnsArchived, `${who}: counters.turnsArchived`).toBe(archived.size);
  // The LLM writes one ACU per turn: each archived turn has exactly one, and none was re-derived.
  expect(new Set(s.acus.map((a) => a.id)).size, `${who}: ACU ids unique`).toBe(s.acus.length);
  expect(new Set(s.acus.map((a) => a.contentHash)).size, `${who}: ACU content hashes unique`).toBe(s.acus.length);
  expect(s.acus.flatMap((a) => a.turnRefs).sort(), `${who}: ACU turn refs = archived turns, once each`).toEqual([...archived].sort());
  expect(s.doc!.counters.acusIndexed, `${who}: counters.acusIndexed`).toBe(s.acus.length);
  expect(s.doc!.counters.acusSuppressed, `${who}: counters.acusSuppressed`).toBe(0);
}

describeWithServer('nats', 'multi-process crash', (natsServers) => {
  describeWithServer('redis', 'multi-process crash on Redis + NATS', (redisServer) => {
    const tag = randomBytes(5).toString('hex');
    const agentId = `agent-${tag}`;
    const redisPrefix = `mge2e:${tag}:`;
    const stream = `MGE2E_${tag}`;
    const subjectPrefix = `mge2e${tag}`;
    const dir = mkdtempSync(join(tmpdir(), 'memgate-e2e-'));
    const sqlitePath = join(dir, 'memgate.db');
    const procs: MemgateProcess[] = [];
    const clients: MemgateClient[] = [];
    let llmA: WindowLlm | undefined;
    let llmB: WindowLlm | undefined;
    let redis: Redis | undefined;
    let nc: NatsConnection | undefined;
    let bus: JetStreamJobBus | undefined;
    let url = '';

    beforeAll(async () => {
      // A answers its first calls, then holds every later one: it dies inside a job, before any write.
      llmA = await startWindowLlm({ delayMs: 150, holdAfterAnswers: 3 });
      llmB = await startWindowLlm({ delayMs: 150 });
      const profile = writeRedisNatsProfile(dir, 'openai', {
        // A dead worker's job comes back after 3 s (not 30 s) and its user lock after 8 s (not 60 s).
        nats: { ackWaitMs: 3_000 },
        worker: { concurrency: 4, lockTtlMs: 8_000, retryDelayMs: 200 },
        memory: { maxKeptTurns: MAX_KEPT_TURNS },
        llm: { timeoutMs: 20_000, maxRetries: 0 },
      });
      const env = {
        MEMGATE_REDIS_URL: redisServer,
        MEMGATE_NATS_URL: natsServers,
        MEMGATE_REDIS_PREFIX: redisPrefix,
        MEMGATE_NATS_STREAM: stream,
        MEMGATE_NATS_PREFIX: subjectPrefix,
        MEMGATE_SQLITE_PATH: sqlitePath,
        MEMGATE_PORT: '0',
        MEMGATE_TOKEN_THRESHOLD: '200',
        MEMGATE_LOG_LEVEL: 'info',
      };
      const args = ['--profile', 'loopback', '--config', profile];
      const started = await Promise.allSettled([
        startGatewayProcess({ name: 'gateway', env, args }),
        startWorkerProcess({ name: 'worker-a', env: { ...env, MEMGATE_LLM_BASE_URL: llmA.url }, args }),
        startWorkerProcess({ name: 'worker-b', env: { ...env, MEMGATE_LLM_BASE_URL: llmB.url }, args }),
      ]);
      for (const r of started) if (r.status === 'fulfilled') procs.push('proc' in r.value ? r.value.proc : r.value);
      for (const r of started) if (r.status === 'rejected') throw r.reason;
      const gateway = started[0];
      if (gateway.status === 'fulfilled') url = gateway.value.url;
      redis = createRedis(redisServer);
      nc = await connect({ servers: natsServers });
      bus = await JetStreamJobBus.create(nc, { stream, subjectPrefix });
    }, 60_000);

    afterAll(async () => {
      await Promise.allSettled(clients.map((c) => c.close()));
      await Promise.allSettled(procs.map((p) => p.stop('SIGTERM', 8_000)));
      await Promise.allSettled([llmA?.close(), llmB?.close()]);
      await dropRunData({ redis, nc, bus }, redisPrefix);
      removeDir(dir);
    }, 30_000);

    it('loses no acked turn, commits no window twice and duplicates no ACU when a worker is SIGKILLed mid-extraction', async () => {
      const [, workerA, workerB] = procs as [MemgateProcess, MemgateProcess, MemgateProcess];
      const a = llmA!;
      const b = llmB!;
      const acked = new Map<string, Set<string>>();
      let killedAt = 0;
      let releaseUsers!: () => void;
      const killed = new Promise<void>((resolve) => (releaseUsers = resolve));

      const streamUser = async (userId: string) => {
        const client = await MemgateClient.connect({ url, requestTimeoutMs: 20_000, reconnect: false });
        clients.push(client);
        await client.start({ agentId, userId, sessionId: `s-${tag}-${userId}` });
        const mine = new Set<string>();
        acked.set(userId, mine);
        for (let i = 0; i < TURNS; i++) {
          if (i === KILL_AT_TURN) await killed;
          const turnId = `${userId}-t${i}-${tag}`;
          const ack = await client.append({ role: i % 2 === 0 ? 'user' : 'agent', text: turnText(), turnId });
          expect(ack).toMatchObject({ turnId, duplicate: false });
          mine.add(turnId);
          await sleep(10 + Math.random() * 20);
        }
        await client.end();
        await client.close();
      };

      const killWorkerA = async () => {
        await waitFor(() => a.held().length > 0, 20_000, 'worker A holding an LLM call', 20);
        // Jobs of A whose calls were all answered finish their writes meanwhile: A dies waiting on its LLM only.
        await sleep(500);
        workerA.child.kill('SIGKILL');
        expect((await workerA.exited).signal).toBe('SIGKILL');
        killedAt = Date.now();
      };

      const users = Array.from({ length: USERS }, (_, u) => `u${String(u).padStart(2, '0')}`);
      // Users are released even when the kill fails, so the test reports that failure instead of hanging.
      await Promise.all([...users.map(streamUser), killWorkerA().finally(releaseUsers)]);
      const heldByA = a.held();
      expect(heldByA.length).toBeGreaterThan(0);
      expect(heldByA.every((c) => c.at <= killedAt)).toBe(true);

      const scopes = users.map((userId): Scope => ({ tenantId: 'default', agentId, userId }));
      const state = new StackState(redis!, redisPrefix, sqlitePath);
      try {
        // Drained, twice in a row: no job pending or in flight, and every user's last commit saw the whole
        // buffer (its kept turns are what is still buffered, at most Smart Keep's maximum).
        let stableRounds = 0;
        await waitFor(
          async () => {
            const depth = await bus!.depth();
            const hot = await Promise.all(scopes.map((s) => state.hot(s)));
            const settled = hot.every(({ buffered, doc }) => buffered.length <= MAX_KEPT_TURNS && doc?.recent.map((t) => t.turnId).join() === buffered.join());
            stableRounds = depth === 0 && settled ? stableRounds + 1 : 0;
            return stableRounds >= 2;
          },
          45_000,
          'worker B draining the work',
          400,
        ).catch((err: unknown) => {
          throw new Error(`${String(err)}\nworker B:\n${tail(workerB.lines)}`);
        });
        expect(workerB.child.exitCode).toBeNull();
        expect(await bus!.deadLetterCount()).toBe(0);

        let total = 0;
        for (const scope of scopes) {
          const s = await state.user(scope);
          expectConsistent(scope.userId, acked.get(scope.userId)!, s);
          total += s.archived.length + s.buffered.length;
        }
        expect(total).toBe(USERS * TURNS);
      } finally {
        state.close();
      }

      // The jobs A held were never acked: JetStream delivered them again, so deliveries exceed messages.
      const jsm = await nc!.jetstreamManager();
      const consumer = await jsm.consumers.info(stream, bus!.names.consumer);
      const jobs = await jsm.streams.info(stream);
      expect(consumer.delivered.consumer_seq).toBeGreaterThan(jobs.state.last_seq);
      // And worker B re-read every turn worker A had in flight when it died.
      const seenByB = new Set(b.calls.filter((c) => c.at >= killedAt).flatMap((c) => c.turnIds));
      expect(heldByA.flatMap((c) => c.turnIds).filter((id) => !seenByB.has(id))).toEqual([]);
    }, 90_000);
  });
});
