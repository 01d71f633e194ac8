/**
 * The durable-write ceiling of the embedded default: SqliteTurnBuffer.append in
 * a tight loop in one process (no network, no parsing, no service). Turn-append
 * saturation over the WebSocket can approach the echo only as far as this allows.
 */
import { join } from 'node:path';
import { openSqlite, SqliteTurnBuffer } from '../../src/adapters/sqlite/index.ts';
import { estimateTokens } from '../../src/core/tokens.ts';
import { Histogram } from '../lib/histogram.ts';
import { summarize, type LatencySummary } from '../lib/stats.ts';
import { syntheticTurn } from '../load/turn-text.ts';

/** Append `turns` synthetic turns spread over `users` users; latency per append and appends/s. */
export function measureSqliteAppendCeiling(dir: string, turns = 20_000, users = 100): LatencySummary {
  const db = openSqlite(join(dir, 'ceiling.db'));
  const buffer = new SqliteTurnBuffer(db);
  const hist = new Histogram();
  const t0 = performance.now();
  try {
    for (let i = 0; i < turns; i++) {
      const u = i % users;
      const t = syntheticTurn(u, Math.floor(i / users));
      const now = Date.now();
      const a = performance.now();
      buffer.append({ tenantId: 'default', agentId: 'ceiling', userId: `u${u}` }, `s${u}`, { turnId: `t${i}`, sessionId: `s${u}`, role: t.role, text: t.text, ts: now, receivedAt: now, tokens: estimateTokens(t.text), speaker: t.speaker });
      hist.recordMs(performance.now() - a);
    }
    return summarize(hist, 0, (performance.now() - t0) / 1000);
  } finally {
    db.close();
  }
}
