/**
 * In-process Okapi BM25 for the hybrid leg over one user's scrolled ACU payloads (the paper's
 * "BM25 leg over ≤1,000 scrolled payloads"). IDF is computed over the scrolled documents only:
 * the user's own corpus is the statistics that matter for ranking within the user's reply.
 * Query stop words are dropped (a few hundred documents cannot teach IDF that "the" is empty).
 * 1,000 short ACUs rank in ~1.5 ms here, mostly tokenising; that runs in chunks with
 * `setImmediate` yields between them, so no scroll holds the event loop for more than one chunk.
 */

/** BM25 parameters (the classic defaults). */
export interface Bm25Params {
  /** Term-frequency saturation. */
  k1: number;
  /** Length normalisation (0 = none, 1 = full). */
  b: number;
}

/** k1 = 1.2, b = 0.75. */
export const BM25_DEFAULTS: Readonly<Bm25Params> = Object.freeze({ k1: 1.2, b: 0.75 });

/** One document to rank: `key` comes back with its score. */
export interface Bm25Doc<K> {
  key: K;
  text: string;
}

/** A ranked document. */
export interface Bm25Hit<K> {
  key: K;
  score: number;
}

/** Options of `rankBm25`. */
export interface Bm25Options extends Partial<Bm25Params> {
  /** Documents tokenised between two event-loop yields. */
  chunkSize?: number;
}

/** A word starts with a letter or digit and keeps its combining marks (Devanagari vowel signs, viramas). */
const TOKEN = /[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu;
/** Combining accents of Latin, Greek and Cyrillic: folded away so "cafe" matches "Café". */
const ACCENTS = /[\u0300-\u036f]/g;
// The NUL..DEL range: a plain-ASCII test, control characters included on purpose.
// eslint-disable-next-line no-control-regex
const ASCII_ONLY = /^[\x00-\x7f]*$/;
const ASCII_TOKEN = /[a-z0-9]+/g;
const DEFAULT_CHUNK_SIZE = 250;

/**
 * English function words left out of the query. Over one user's few hundred ACUs, IDF cannot
 * learn that "is" or "the" carry nothing, so they would weigh as much as "Whitefield".
 */
const STOPWORDS: ReadonlySet<string> = new Set(
  (
    'about above after again all am an and any are as at be because been before being below between both but by can ' +
    'could did do does doing down during each few for from further had has have having he her here hers him his how if ' +
    'in into is it its just me more most my no nor not now of off on once only or other our out over own same she ' +
    'should so some such than that the their them then there these they this those through to too under until up very ' +
    'was we were what when where which while who whom why will with would you your ok okay yes yeah um uh hmm please tell'
  ).split(' '),
);

/**
 * Lower-cased words of any script: NFKD so full-width letters and ligatures match their plain
 * forms, Latin-style accents folded, other scripts' marks kept inside the word. Single letters
 * are dropped (noise); single digits are kept ("plot 7").
 */
export function tokenize(text: string): string[] {
  // Fast path for plain ASCII (most ACU text): no normalisation, a cheaper regex.
  const ascii = ASCII_ONLY.test(text);
  const folded = ascii ? text.toLowerCase() : text.normalize('NFKD').replace(ACCENTS, '').normalize('NFC').toLowerCase();
  const words = folded.match(ascii ? ASCII_TOKEN : TOKEN) ?? [];
  return words.filter((t) => t.length > 1 || (t >= '0' && t <= '9'));
}

/** The distinct query words BM25 sums over: stop words dropped, unless the query has nothing else. */
export function queryTerms(query: string): Set<string> {
  const words = new Set(tokenize(query));
  const content = [...words].filter((w) => !STOPWORDS.has(w));
  return content.length > 0 ? new Set(content) : words;
}

/** IDF with the +1 inside the log (Lucene's form), so a term in every document still scores > 0. */
export function idf(docCount: number, docFreq: number): number {
  return Math.log(1 + (docCount - docFreq + 0.5) / (docFreq + 0.5));
}

/** Per-document statistics for the query's terms only: all the scorer needs. */
interface DocStats {
  length: number;
  tf: Map<string, number>;
}

function docStats(text: string, terms: ReadonlySet<string>): DocStats {
  const tokens = tokenize(text);
  const tf = new Map<string, number>();
  for (const t of tokens) if (terms.has(t)) tf.set(t, (tf.get(t) ?? 0) + 1);
  return { length: tokens.length, tf };
}

/** BM25 score of every document (same order), synchronously. Exposed for tests and tiny corpora. */
export function scoreBm25(query: string, texts: readonly string[], params: Bm25Params = BM25_DEFAULTS): number[] {
  const terms = queryTerms(query);
  return scoreStats(
    terms,
    texts.map((t) => docStats(t, terms)),
    params,
  );
}

function scoreStats(terms: ReadonlySet<string>, stats: readonly DocStats[], { k1, b }: Bm25Params): number[] {
  const n = stats.length;
  if (n === 0 || terms.size === 0) return stats.map(() => 0);
  let totalLength = 0;
  const df = new Map<string, number>();
  for (const s of stats) {
    totalLength += s.length;
    for (const t of s.tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  }
  const avgLength = totalLength / n || 1;
  const weights = new Map<string, number>();
  for (const [t, f] of df) weights.set(t, idf(n, f));
  return stats.map((s) => {
    let score = 0;
    const norm = k1 * (1 - b + (b * s.length) / avgLength);
    for (const [t, f] of s.tf) score += (weights.get(t) ?? 0) * ((f * (k1 + 1)) / (f + norm));
    return score;
  });
}

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Top-`k` documents by BM25, best first; documents that share no term with the query are left
 * out. Ties keep input order (the caller scrolls newest first, so newer wins).
 */
export async function rankBm25<K>(query: string, docs: readonly Bm25Doc<K>[], k: number, options: Bm25Options = {}): Promise<Bm25Hit<K>[]> {
  const terms = queryTerms(query);
  if (k <= 0 || terms.size === 0 || docs.length === 0) return [];
  const chunkSize = Math.max(1, options.chunkSize ?? DEFAULT_CHUNK_SIZE);
  const stats: DocStats[] = [];
  for (let i = 0; i < docs.length; i += chunkSize) {
    if (i > 0) await yieldToEventLoop();
    for (const d of docs.slice(i, i + chunkSize)) stats.push(docStats(d.text, terms));
  }
  const scores = scoreStats(terms, stats, { k1: options.k1 ?? BM25_DEFAULTS.k1, b: options.b ?? BM25_DEFAULTS.b });
  const hits: Array<Bm25Hit<K> & { order: number }> = [];
  scores.forEach((score, order) => {
    const doc = docs[order];
    if (doc !== undefined && score > 0) hits.push({ key: doc.key, score, order });
  });
  hits.sort((x, y) => y.score - x.score || x.order - y.order);
  return hits.slice(0, k).map(({ key, score }) => ({ key, score }));
}
