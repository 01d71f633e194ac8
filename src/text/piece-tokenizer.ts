/**
 * The SentencePiece tokenizer USE-lite was run with (`Tokenizer` of
 * `@energetic-ai/embeddings` 0.2.0, itself from tfjs-models, Apache-2.0), ported so the
 * encoder needs neither that package (which loads TF.js) nor its cost: the original
 * slices the rest of the text at every position (quadratic in the text's length) and
 * holds its vocabulary as a trie of objects; this one looks up each position's
 * prefixes, up to the longest piece, in a Map. Same pieces, same ties, same quirks
 * (checked against the original in test/adapters/use-lite-int8.test.ts):
 * - a character no piece starts with becomes the unknown piece (id 0, score 0), and runs
 *   of unknown pieces merge into one;
 * - `best === 0` counts as "no path yet", so a later candidate replaces a 0-score path;
 * - ties go to the candidate that starts later;
 * - positions count code points, but the walk back steps by the piece's UTF-16 length.
 */

/** `vocab.json`: [piece, log-probability] per id. */
export type Vocabulary = ReadonlyArray<readonly [string, number]>;

/** Unknown, <s>, </s> and three extras: never matched. */
const RESERVED = 6;
const SEPARATOR = '\u2581';

export class PieceTokenizer {
  /** Piece → id. A Map of 8,000 strings, not a trie: a trie of objects held ~8 MiB. */
  private readonly ids = new Map<string, number>();
  /** Longest piece, in code points: how far a match is looked for from each position. */
  private readonly longest: number;
  private readonly scores: Float64Array;
  private readonly unitLengths: Int32Array;

  constructor(vocabulary: Vocabulary) {
    this.scores = new Float64Array(vocabulary.length);
    this.unitLengths = new Int32Array(vocabulary.length);
    let longest = 1;
    vocabulary.forEach(([piece, score], id) => {
      this.scores[id] = score;
      this.unitLengths[id] = piece.length;
      if (id < RESERVED) return;
      // A duplicate piece keeps the later id, as the original's trie does.
      this.ids.set(piece, id);
      longest = Math.max(longest, [...piece].length);
    });
    this.longest = longest;
  }

  encode(text: string): number[] {
    const normalized = text.normalize('NFKC');
    const input = normalized.length > 0 ? SEPARATOR + normalized.replace(/ /g, SEPARATOR) : normalized;
    const symbols = [...input];
    const n = symbols.length;
    // Per end position, the candidates (start, id) in ascending start order: the order the
    // original visits them in (an object's integer keys iterate ascending).
    const starts: number[][] = Array.from({ length: n + 1 }, () => []);
    const ids: number[][] = Array.from({ length: n + 1 }, () => []);
    for (let i = 0; i < n; i++) {
      let matched = false;
      let piece = '';
      for (let length = 1; length <= this.longest && i + length <= n; length++) {
        piece += symbols[i + length - 1]!;
        const id = this.ids.get(piece);
        if (id === undefined) continue;
        starts[i + length]!.push(i);
        ids[i + length]!.push(id);
        matched = true;
      }
      if (!matched) {
        starts[i + 1]!.push(i);
        ids[i + 1]!.push(0);
      }
    }
    const best = new Float64Array(n + 1);
    const words = new Int32Array(n + 1);
    for (let end = 0; end <= n; end++) {
      const s = starts[end]!;
      const d = ids[end]!;
      for (let k = 0; k < s.length; k++) {
        const id = d[k]!;
        const score = this.scores[id]! + best[s[k]!]!;
        if (best[end] === 0 || score >= best[end]!) {
          best[end] = score;
          words[end] = id;
        }
      }
    }
    const pieces: number[] = [];
    for (let at = n; at > 0; at -= this.unitLengths[words[at]!]!) pieces.push(words[at]!);
    const merged: number[] = [];
    let previousUnknown = false;
    for (const id of pieces) {
      if (!(previousUnknown && id === 0)) merged.push(id);
      previousUnknown = id === 0;
    }
    return merged.reverse();
  }
}
