import { startTestServer } from '../gateway/support/real-server.ts';
import { KNOWN_GAPS } from './known-gaps.ts';
import { scoreScenarios } from './scenarios.ts';
import { productEmbedder } from '../support/config.ts';

/**
 * `npm run scenarios`: plays every scenario on the embedded default (offline extractor) and
 * prints the share right per check and per domain, then each wrong scenario with why.
 * Exit code 1 when a scenario outside known-gaps.ts is wrong.
 */
const pct = ([right, total]: [number, number]) => (total === 0 ? '—' : `${((100 * right) / total).toFixed(1)} % (${right}/${total})`);
const embedder = productEmbedder();
const srv = await startTestServer({ config: { adapters: { embedder } } });
try {
  const { scores } = await scoreScenarios(srv);
  console.log(`${scores.scenarios} scenarios, embedded default, offline extractor, ${embedder} embedder`);
  for (const k of ['timeline', 'context', 'search', 'block'] as const) console.log(`  ${k.padEnd(9)} right: ${pct(scores[k])}`);
  for (const [d, v] of Object.entries(scores.domains)) console.log(`  ${d.padEnd(12)} all checks right: ${pct(v)}`);
  const unexpected = scores.failures.filter((f) => !(f.slice(0, f.indexOf(':')) in KNOWN_GAPS));
  for (const f of scores.failures) console.log(`${f.slice(0, f.indexOf(':')) in KNOWN_GAPS ? 'known gap' : 'WRONG    '}  ${f}`);
  process.exitCode = unexpected.length > 0 ? 1 : 0;
} finally {
  await srv.close();
}
