/** A row of a packed matrix and its score. */
export interface ScoredRow {
  index: number;
  score: number;
}

/** Unit-length copy of `v`; a zero (or non-finite) vector comes back as zeros, scoring 0 against anything. */
export function l2Normalize(v: ArrayLike<number>): Float32Array {
  const out = new Float32Array(v.length);
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  const norm = Math.sqrt(sum);
  if (!(norm > 0) || !Number.isFinite(norm)) return out;
  for (let i = 0; i < v.length; i++) out[i] = v[i]! / norm;
  return out;
}

/**
 * The k rows of a row-major `matrix` (`rows` x `dim`) with the largest dot product
 * with `query`, best first (ties: lower row first). One pass, four accumulators
 * per row, and a k-sized sorted buffer that most rows leave after one comparison.
 */
export function topKDot(matrix: Float32Array, dim: number, rows: number, query: Float32Array, k: number): ScoredRow[] {
  const size = Math.min(Math.floor(k), rows);
  if (size <= 0) return [];
  const bestScore = new Float64Array(size);
  const bestIndex = new Int32Array(size);
  let filled = 0;
  const tail = dim - (dim % 4);
  for (let r = 0, off = 0; r < rows; r++, off += dim) {
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    let j = 0;
    for (; j < tail; j += 4) {
      s0 += matrix[off + j]! * query[j]!;
      s1 += matrix[off + j + 1]! * query[j + 1]!;
      s2 += matrix[off + j + 2]! * query[j + 2]!;
      s3 += matrix[off + j + 3]! * query[j + 3]!;
    }
    for (; j < dim; j++) s0 += matrix[off + j]! * query[j]!;
    const score = s0 + s1 + s2 + s3;
    if (filled === size) {
      if (!(score > bestScore[size - 1]!)) continue;
      filled--;
    }
    let pos = filled++;
    while (pos > 0 && bestScore[pos - 1]! < score) {
      bestScore[pos] = bestScore[pos - 1]!;
      bestIndex[pos] = bestIndex[pos - 1]!;
      pos--;
    }
    bestScore[pos] = score;
    bestIndex[pos] = r;
  }
  const out: ScoredRow[] = [];
  for (let i = 0; i < filled; i++) out.push({ index: bestIndex[i]!, score: bestScore[i]! });
  return out;
}
