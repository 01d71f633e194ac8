import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startMemgate } from '../lib/memgate.ts';
import { say } from '../lib/progress.ts';
import type { Figure } from '../lib/report-types.ts';
import type { Suite, SuiteOutcome } from '../lib/suite.ts';
import { figure } from '../lib/targets.ts';
import { appendScenarios, appendSpec, cpuFigure, measured, type Measured } from './append.ts';
import { latencyFigures } from './latency-figures.ts';

/**
 * What OpenTelemetry costs the append path: the same load against memgate without an SDK (every
 * span the API's no-op, the default) and against memgate with a host's SDK registered by a preload
 * (bench/tracing/otel-sdk.mjs: every span recorded, batched, then dropped instead of sent), back to
 * back in one run. 1,000 calls at voice cadence (the p99 the design sets a target for) and the
 * saturation shape (server CPU per request, the figure least disturbed by other load).
 */
export const appendTracingSuite: Suite = {
  name: 'append-tracing',
  title: 'Turn append with tracing off (no SDK) and on (SDK registered, every span recorded)',
  quick: false,
  async run(ctx): Promise<SuiteOutcome> {
    const spansFile = join(ctx.tmpDir, 'append-tracing-spans.json');
    const preload = pathToFileURL(join(ctx.repoRoot, 'bench/tracing/otel-sdk.mjs')).href;
    const off = await startMemgate(join(ctx.tmpDir, 'append-tracing-off'));
    const on = await startMemgate(join(ctx.tmpDir, 'append-tracing-on'), { preload, env: { MEMGATE_BENCH_SPANS_FILE: spansFile } });
    const figures: Figure[] = [];
    const details: Record<string, unknown> = { sdk: '@opentelemetry/sdk-trace-base BasicTracerProvider + BatchSpanProcessor (dropping exporter) + AsyncLocalStorageContextManager', scenarios: [] };
    const scenarios = appendScenarios(ctx).filter((s) => s.connections === 1000 || s.mode === 'saturation');
    let stopped = false;
    try {
      for (const sc of scenarios) {
        say(`  ${sc.label}: ${sc.durationS} s measured, tracing off then on`);
        const prefix = `${sc.connections}-${sc.mode}-`;
        const untraced: Measured = await measured(`memgate tracing off ${sc.label}`, appendSpec(sc, off.wsUrl, `bench-trace-${ctx.runId}`, `off-${prefix}`), off.pid);
        const traced: Measured = await measured(`memgate tracing on ${sc.label}`, appendSpec(sc, on.wsUrl, `bench-trace-${ctx.runId}`, `on-${prefix}`), on.pid);
        const bench = `ws append, ${sc.label}, tracing on (SDK, every span recorded)`;
        figures.push(...latencyFigures(bench, traced.summary, { label: 'tracing off (no SDK)', summary: untraced.summary }));
        if (sc.mode === 'saturation') figures.push(cpuFigure(bench, traced, untraced, 'tracing off (no SDK)'));
        (details['scenarios'] as unknown[]).push({ scenario: sc, off: untraced, on: traced });
      }
      await Promise.all([off.stop(), on.stop()]);
      stopped = true;
      // The traced server's spans, counted by its SDK: proof the "on" run recorded what it claims.
      const spans = existsSync(spansFile) ? (JSON.parse(readFileSync(spansFile, 'utf8')) as Record<string, number>) : null;
      details['spansRecorded'] = spans;
      // Every reply but each call's start reply is an append's ack (warm-up included, as in the span count).
      const appends = (details['scenarios'] as Array<{ scenario: { connections: number }; on: Measured }>).reduce((n, s) => n + s.on.totalReplies - s.scenario.connections, 0);
      figures.push(
        figure({ bench: 'ws append, tracing on', metric: 'memgate.append spans recorded', value: spans?.['memgate.append'] ?? null, unit: '', baseline: { label: 'appends acked', value: appends } }),
      );
      return { status: 'ok', figures, details };
    } finally {
      if (!stopped) await Promise.all([off.stop(), on.stop()]);
    }
  },
};
