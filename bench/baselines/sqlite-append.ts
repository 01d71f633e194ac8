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

/**
 * Append `turns` synthetic turns spread over `users` users (after a warm-up of a
 * fifth as many, so the JIT and the page cache are in steady state); the turns
 * are built before the clock starts, so appends/s counts only the durable write.
 */
export function measureSqliteAppendCeiling(dir: string, turns = 20_000, users = 100): LatencySummary {
  const db = openSqlite(join(dir, 'ceiling.db'));
  const buffer = new SqliteTurnBuffer(db);
  const warmup = Math.floor(turns / 5);
  const now = Date.now();
  const inputs = Array.from({ length: warmup + turns }, (_, i) => {
    const u = i % users;
    const t = syntheticTurn(u, Math.floor(i / users));
    return {
      scope: { tenantId: 'default', agentId: 'ceiling', userId: `u${u}` },
      sessionId: `s${u}`,
      turn: { turnId: `t${i}`, sessionId: `s${u}`, role: t.role, text: t.text, ts: now, receivedAt: now, tokens: estimateTokens(t.text), speaker: t.speaker },
    };
  });
  const hist = new Histogram();
  try {
    for (let i = 0; i < warmup; i++) buffer.append(inputs[i]!.scope, inputs[i]!.sessionId, inputs[i]!.turn);
    const t0 = performance.now();
    for (let i = warmup; i < inputs.length; i++) {
      const a = performance.now();
      buffer.append(inputs[i]!.scope, inputs[i]!.sessionId, inputs[i]!.turn);
      hist.recordMs(performance.now() - a);
    }
    return summarize(hist, 0, (performance.now() - t0) / 1000);
  } finally {
    db.close();
  }
}
