import { http, WsTester } from '../gateway/support/ws-tester.ts';
import { ScriptedUser, type ScriptTurn, type TestServer } from '../conversations/support.ts';

/**
 * The same scripted user over the WebSocket, as a voice pipeline holding one connection per
 * call would drive memgate: start, append, end on the socket, and search on the next call's
 * socket. The flush and the timeline have no socket op and stay on HTTP.
 */
export class WsScriptedUser extends ScriptedUser {
  private turns = 0;
  /** Sockets of calls left open (`end: false`): closed by `hangUp`. */
  private readonly open: WsTester[] = [];

  constructor(private readonly server: TestServer) {
    super(server);
  }

  override async call(turns: readonly ScriptTurn[], opts: { end?: boolean } = {}): Promise<Record<string, any>> {
    const ws = await WsTester.open(this.server.wsUrl);
    let keep = false;
    try {
      const ctx = await this.expect(ws, { op: 'start', agentId: this.agentId, userId: this.userId }, 'context');
      for (const t of turns) {
        const frame: Record<string, unknown> = { op: 'append', role: t.role, text: t.text, ts: t.at, turnId: `${this.userId}-ws-${++this.turns}` };
        if (t.asrConfidence !== undefined) frame['asrConfidence'] = t.asrConfidence;
        await this.expect(ws, frame, 'ack');
      }
      if (opts.end === false) {
        keep = true;
        this.open.push(ws);
        return ctx;
      }
      await this.expect(ws, { op: 'end' }, 'ended');
      const flush = await http(this.server.base, 'POST', `/v1/agents/${this.agentId}/users/${this.userId}/flush`);
      if (flush.status !== 200) throw new Error(`flush failed: ${JSON.stringify(flush.body)}`);
      return ctx;
    } finally {
      if (!keep) await ws.close();
    }
  }

  override async hangUp(): Promise<void> {
    await Promise.all(this.open.splice(0).map((ws) => ws.close()));
  }

  override async nextContext(): Promise<Record<string, any>> {
    const ws = await WsTester.open(this.server.wsUrl);
    try {
      return await this.expect(ws, { op: 'start', agentId: this.agentId, userId: this.userId }, 'context');
    } finally {
      await ws.close();
    }
  }

  override async search(query: string, extra: Record<string, unknown> = {}): Promise<Array<Record<string, any>>> {
    const ws = await WsTester.open(this.server.wsUrl);
    try {
      await this.expect(ws, { op: 'start', agentId: this.agentId, userId: this.userId }, 'context');
      const r = await this.expect(ws, { op: 'search', query, k: 5, ...extra }, 'results');
      return r['results'] as Array<Record<string, any>>;
    } finally {
      await ws.close();
    }
  }

  private async expect(ws: WsTester, frame: Record<string, unknown>, op: string): Promise<Record<string, any>> {
    const r = await ws.request(frame);
    if (r['op'] !== op) throw new Error(`${String(frame['op'])}: got ${JSON.stringify(r)}`);
    return r;
  }
}
