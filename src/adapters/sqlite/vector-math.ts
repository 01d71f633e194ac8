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
