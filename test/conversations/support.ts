import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { startTestServer, uniq, type TestServer } from '../gateway/support/real-server.ts';
import { http } from '../gateway/support/ws-tester.ts';

/** One turn of a scripted call: `at` is when it was said (ISO). */
export interface ScriptTurn {
  role: 'user' | 'agent';
  text: string;
  at: string;
  asrConfidence?: number;
}

/**
 * A user on a running memgate, driven over HTTP as a voice pipeline would: each call is a
 * session start, its turns, the call's end and a flush (so checks see committed memory).
 */
export class ScriptedUser {
  readonly agentId = uniq('agent');
  readonly userId = uniq('user');
  private n = 0;

  constructor(private readonly srv: TestServer) {}

  async useSchema(file: string): Promise<void> {
    const schema = JSON.parse(readFileSync(new URL(`../../config/schemas/${file}.json`, import.meta.url), 'utf8')) as unknown;
    const r = await http(this.srv.base, 'PUT', `/v1/agents/${this.agentId}/schema`, { body: schema });
    if (r.status !== 200) throw new Error(`schema PUT failed: ${JSON.stringify(r.body)}`);
  }

  /** One call; returns the context the call started with. `end: false` leaves it open: no end, no flush. */
  async call(turns: readonly ScriptTurn[], opts: { end?: boolean } = {}): Promise<Record<string, any>> {
    const start = await http(this.srv.base, 'POST', '/v1/sessions', { body: { agentId: this.agentId, userId: this.userId } });
    const sid = start.body.sessionId as string;
    for (const t of turns) {
      const body: Record<string, unknown> = { role: t.role, text: t.text, ts: t.at, turnId: `${this.userId}-${++this.n}` };
      if (t.asrConfidence !== undefined) body['asrConfidence'] = t.asrConfidence;
      const ack = await http(this.srv.base, 'POST', `/v1/sessions/${sid}/turns`, { body });
      if (ack.status !== 200) throw new Error(`append failed: ${JSON.stringify(ack.body)}`);
    }
    if (opts.end === false) return start.body as Record<string, any>;
    await http(this.srv.base, 'POST', `/v1/sessions/${sid}/end`);
    const flush = await http(this.srv.base, 'POST', `/v1/agents/${this.agentId}/users/${this.userId}/flush`);
    if (flush.status !== 200) throw new Error(`flush failed: ${JSON.stringify(flush.body)}`);
    return start.body as Record<string, any>;
  }

  /** Let go of calls left open (HTTP holds nothing open). */
  async hangUp(): Promise<void> {}

  /** The context the next call would start with. */
  async nextContext(): Promise<Record<string, any>> {
    return (await http(this.srv.base, 'POST', '/v1/sessions', { body: { agentId: this.agentId, userId: this.userId } })).body as Record<string, any>;
  }

  async timeline(): Promise<Array<Record<string, any>>> {
    return (await http(this.srv.base, 'GET', `/v1/agents/${this.agentId}/users/${this.userId}/entities?history=true`)).body.entities as Array<Record<string, any>>;
  }

  async search(query: string, extra: Record<string, unknown> = {}): Promise<Array<Record<string, any>>> {
    const r = await http(this.srv.base, 'POST', '/v1/search', { body: { agentId: this.agentId, userId: this.userId, query, k: 5, ...extra } });
    if (r.status !== 200) throw new Error(`search failed: ${JSON.stringify(r.body)}`);
    return r.body.results as Array<Record<string, any>>;
  }
}

/**
 * A gateway on Redis + NATS (buffer, cache, lock, job bus and events on the real servers,
 * documents, cold turns and ACUs on SQLite) with a worker extracting, under its own key
 * prefix, stream and subjects; hashing embeddings unless `embedder` says otherwise.
 */
export async function startProductionTestServer(redisUrl: string, natsUrl: string, name: string, server: Record<string, unknown> = {}, embedder = 'offline'): Promise<TestServer> {
  const tag = randomBytes(4).toString('hex');
  return startTestServer({
    workers: true,
    config: {
      server,
      adapters: { buffer: 'redis', cache: 'redis', lock: 'redis', bus: 'nats', events: 'nats', documents: 'sqlite', cold: 'sqlite', acus: 'sqlite', extractor: 'offline', embedder },
      redis: { url: redisUrl, keyPrefix: `${name}:${tag}:` },
      nats: { servers: natsUrl, stream: `${name.toUpperCase()}_${tag}`, subjectPrefix: `${name}${tag}` },
    },
  });
}

export { startTestServer, type TestServer };
