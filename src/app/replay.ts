import { ManualClock } from '../core/clock.ts';
import { createLogger } from '../core/logger.ts';
import type { OutdatedMark, Scope, TemporalEntity } from '../core/types.ts';
import type { Config } from '../config/config-schema.ts';
import { formatValue } from '../text/values.ts';
import { keyLabel } from '../memory/fact-state.ts';
import { createRuntime } from './wiring.ts';
import { readTranscript } from '../cli/transcript.ts';

/** Where replay output goes: stdout for the report, stderr for progress. */
export interface ReplayIo {
  out(line: string): void;
  progress(line: string): void;
}

const defaultIo: ReplayIo = { out: (l) => process.stdout.write(l + '\n'), progress: (l) => process.stderr.write(l + '\n') };

/**
 * `memgate replay FILE`: stream a multi-call transcript through the service on
 * a clock that follows the transcript's own timestamps, run the background lane
 * after each call (as the call's end would), then print what the next call
 * would get, the full bi-temporal timeline and a few searches.
 */
export async function replay(file: string, config: Config, io: ReplayIo = defaultIo): Promise<void> {
  const transcript = readTranscript(file);
  const clock = new ManualClock(transcript.calls[0]!.turns[0]!.ts);
  const runtime = await createRuntime(config, { clock, logger: createLogger(config.log.level === 'info' ? 'warn' : config.log.level) });
  const scope: Scope = { tenantId: transcript.tenantId, agentId: transcript.agentId, userId: transcript.userId };
  const svc = runtime.service;
  try {
    const total = transcript.calls.reduce((n, c) => n + c.turns.length, 0);
    let done = 0;
    for (const [i, call] of transcript.calls.entries()) {
      clock.set(call.turns[0]!.ts);
      const { sessionId } = await svc.startSession(scope, call.sessionId);
      for (const turn of call.turns) {
        clock.set(turn.ts);
        await svc.appendTurn(scope, sessionId, turn);
        done++;
      }
      await svc.endSession(scope, sessionId);
      const report = await svc.flush(scope);
      io.progress(
        `[replay] call ${i + 1}/${transcript.calls.length} ${bar(done, total)} ${done}/${total} turns · extracted ${report.factsExtracted} facts, +${report.entitiesInserted} records, ${report.entitiesSuperseded} superseded, ${report.acusIndexed} ACUs (${report.acusSuppressed} dup)`,
      );
    }
    const last = transcript.calls[transcript.calls.length - 1]!.turns;
    clock.set(last[last.length - 1]!.ts + 60 * 60 * 1000);
    const next = await svc.startSession(scope);
    io.out('════ Next call: context block (' + next.tookMs + ' ms) ════');
    io.out(next.contextBlock);
    io.out('');
    io.out('════ Bi-temporal timeline (history=true) ════');
    for (const line of timelineTable(await svc.timeline(scope, true), clock.now())) io.out(line);
    for (const query of transcript.searches) {
      const r = await svc.search(scope, query, { k: 3 });
      io.out('');
      io.out(`════ memory_search "${query}" (${r.tookMs} ms) ════`);
      for (const hit of r.results) io.out(`  ${hit.score.toFixed(3)} ${hit.confidence.padEnd(6)} ${hit.source.padEnd(6)} ${hit.text}${hit.outdated ? `  [outdated: ${markNote(hit.outdated)}]` : ''}`);
      if (r.results.length === 0) io.out('  (no results)');
    }
  } finally {
    await runtime.close();
  }
}

function bar(done: number, total: number, width = 20): string {
  const n = Math.round((done / total) * width);
  return '[' + '#'.repeat(n) + '.'.repeat(width - n) + ']';
}

/** One aligned row per record: what changed, when in the world, and when memgate learned it. */
export function timelineTable(entities: ReadonlyArray<Omit<TemporalEntity, 'status'> & { status: string }>, now: number): string[] {
  const rows = [...entities].sort((a, b) => a.key.localeCompare(b.key) || a.validFrom.localeCompare(b.validFrom));
  const head = ['key', 'value', 'status', 'source', 'valid from', 'valid until', 'recorded at', 'note'];
  const body = rows.map((e) => [
    e.key,
    formatValue(e.value),
    e.status,
    e.source,
    e.validFrom.slice(0, 16),
    e.validUntil?.slice(0, 16) ?? '—',
    e.recordedAt.slice(0, 16),
    e.expiresAt && Date.parse(e.expiresAt) <= now ? 'expired (hidden)' : e.category === 'ephemeral' ? `expires ${e.expiresAt?.slice(0, 16)}` : '',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const fmt = (r: string[]) =>
    '  ' +
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [fmt(head), fmt(widths.map((w) => '─'.repeat(w))), ...body.map(fmt)];
}

/** A search hit's mark worded as the context block words it ("loan status is now approved"), not by its raw key. */
function markNote(mark: OutdatedMark): string {
  return mark.now === null ? `${keyLabel(mark.key)} no longer current` : `${keyLabel(mark.key)} is now ${formatValue(mark.now)}`;
}
