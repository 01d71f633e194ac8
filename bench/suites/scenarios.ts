import { startTestServer } from '../../test/gateway/support/real-server.ts';
import { scoreScenarios } from '../../test/scenarios/scenarios.ts';
import { productEmbedder } from '../../test/support/config.ts';
import { say } from '../lib/progress.ts';
import type { Figure } from '../lib/report-types.ts';
import type { Suite, SuiteOutcome } from '../lib/suite.ts';

const pct = ([right, total]: [number, number]) => (total === 0 ? null : Math.round((1000 * right) / total) / 10);

/**
 * The scenario suite (test/scenarios): scripted multi-call conversations in four
 * domains on the embedded default with the offline extractor; the share right
 * on the timeline, the next context block and memory_search, and per domain.
 */
export const scenariosSuite: Suite = {
  name: 'scenarios',
  title: 'Memory rules as conversations (share of scenarios right)',
  quick: true,
  async run(): Promise<SuiteOutcome> {
    const embedder = productEmbedder();
    const srv = await startTestServer({ config: { adapters: { embedder } } });
    try {
      const { scores } = await scoreScenarios(srv, (done, total) => {
        if (done % 10 === 0 || done === total) say(`scenarios: ${done}/${total}`);
      });
      const row = `${scores.scenarios} scenarios, offline extractor, ${embedder} embedder`;
      const figures: Figure[] = [
        { bench: row, metric: 'timeline right', value: pct(scores.timeline), unit: '%' },
        { bench: row, metric: 'context right', value: pct(scores.context), unit: '%' },
        { bench: row, metric: 'search right', value: pct(scores.search), unit: '%' },
        { bench: row, metric: 'context blocks without checker defects', value: pct(scores.block), unit: '%' },
        ...Object.entries(scores.domains).map(([d, v]) => ({ bench: row, metric: `${d}: all checks right`, value: pct(v), unit: '%' })),
      ];
      return { status: 'ok', figures, details: { ...scores } };
    } finally {
      await srv.close();
    }
  },
};
