/**
 * How the semantic fact and recent tiers' cosine floor was chosen (src/memory/semantic-tiers.ts):
 * the fused embedder's cosine between a question and the turn that answers it (LoCoMo dev, its
 * evidence ids) against a question and a turn of another conversation (unrelated), and a
 * question against the fields of the shipped schemas (LoCoMo questions are about hobbies and
 * family, so nearly all of those pairs are unrelated). Prints percentiles of each.
 * Run: npx tsx scripts/calibrate-semantic-tiers.ts [questions, default 300]
 */
import { readFileSync, readdirSync } from 'node:fs';
import { FusedEmbedder } from '../src/adapters/fused/index.ts';
import { OfflineEmbedder } from '../src/adapters/offline/index.ts';
import { StaticUseEmbedder } from '../src/adapters/static-use/index.ts';
import { UseLiteEmbedder } from '../src/adapters/use-lite/index.ts';
import { encoderView } from '../src/text/encoder-view.ts';
import { fieldText } from '../src/memory/semantic-tiers.ts';
import type { ExtractionSchema } from '../src/core/extraction-schema.ts';
import { evidenceIds, loadLocomo, locomoPath, sessionsOf } from '../bench/locomo/dataset.ts';
import { cosine } from '../src/memory/cosine.ts';

const questions = Number(process.argv[2] ?? 300);
const samples = loadLocomo(locomoPath(process.cwd()));
if (!samples) throw new Error('LoCoMo dev split not found (MEMGATE_LOCOMO_PATH)');
const hashing = new OfflineEmbedder();
const encoder = new UseLiteEmbedder({ runIn: 'in-process' });
// As src/app/wiring.ts builds them, at the configured default shares (fused 0.65, static-fused 0.5).
const fused = new FusedEmbedder([
  { embedder: hashing, weight: 0.35 },
  { embedder: encoder, weight: 0.65, costly: true, view: encoderView },
]);
const staticUse = new StaticUseEmbedder();
const staticFused = new FusedEmbedder([
  { embedder: hashing, weight: 0.5 },
  { embedder: staticUse, weight: 0.5 },
]);

// Deterministic picks: every k-th question with evidence, a turn of the next sample as its unrelated partner.
const turnsBySample = samples.map((s) => new Map(sessionsOf(s).flatMap((x) => x.turns.map((t) => [t.diaId, t.text] as const))));
const related: Array<[string, string]> = [];
const unrelated: Array<[string, string]> = [];
const all = samples.flatMap((s, i) => s.qa.filter((q) => q.category <= 4 && evidenceIds(q).length > 0).map((q) => ({ q, i })));
const step = Math.max(1, Math.floor(all.length / questions));
for (let j = 0; j < all.length && related.length < questions; j += step) {
  const { q, i } = all[j]!;
  const ev = turnsBySample[i]!.get(evidenceIds(q)[0]!);
  if (!ev) continue;
  related.push([q.question, ev]);
  const other = [...turnsBySample[(i + 1) % samples.length]!.values()];
  for (let r = 0; r < 3; r++) unrelated.push([q.question, other[(j * 7 + r * 131) % other.length]!]);
}
const fields = readdirSync('config/schemas').flatMap((f) => (JSON.parse(readFileSync(`config/schemas/${f}`, 'utf8')) as ExtractionSchema).fields.map(fieldText));
const fieldPairs: Array<[string, string]> = related.slice(0, 100).flatMap(([q]) => fields.map((f) => [q, f] as [string, string]));

async function cosines(pairs: Array<[string, string]>, e: { embed(t: readonly string[]): Promise<Float32Array[]> }): Promise<number[]> {
  const texts = [...new Set(pairs.flat())];
  const vs = await e.embed(texts);
  const at = new Map(texts.map((t, i) => [t, vs[i]!]));
  return pairs.map(([a, b]) => cosine(at.get(a)!, at.get(b)!));
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const line = (name: string, xs: number[]) =>
  console.log(`${name.padEnd(28)} n=${String(xs.length).padStart(5)}  ${[5, 25, 50, 75, 90, 95, 99].map((p) => `p${p}=${pct(xs, p).toFixed(3)}`).join(' ')}`);

const embedders = { fused, 'use-lite': encoder, static: staticUse, 'static-fused': staticFused, offline: hashing };
for (const [name, e] of Object.entries(embedders)) {
  const rel = await cosines(related, e);
  const unrel = await cosines(unrelated, e);
  line(`${name}: related turn`, rel);
  line(`${name}: unrelated turn`, unrel);
  line(`${name}: question x field`, await cosines(fieldPairs, e));
  // The floor: a cosine unrelated pairs rarely reach (p99); strong: one most answers reach (p90).
  console.log(`${name}: floor ${pct(unrel, 99).toFixed(2)}, strong ${pct(rel, 90).toFixed(2)}\n`);
}
await encoder.close();
