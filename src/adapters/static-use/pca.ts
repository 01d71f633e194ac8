/**
 * Principal axes of a set of rows, for the static table's dimension reduction (PCA on the
 * covariance with a dependency-free symmetric eigen solver, run once per table build).
 */

/** Mean and the top `k` principal axes (unit, by falling variance) of `rows` (n × d, row-major). */
export function principalAxes(rows: Float32Array, d: number, k: number): { mean: Float64Array; axes: Float64Array[]; variances: number[] } {
  const n = rows.length / d;
  const mean = new Float64Array(d);
  for (let r = 0; r < n; r++) for (let j = 0; j < d; j++) mean[j]! += rows[r * d + j]! / n;
  const cov = new Float64Array(d * d);
  const centred = new Float64Array(d);
  for (let r = 0; r < n; r++) {
    for (let j = 0; j < d; j++) centred[j] = rows[r * d + j]! - mean[j]!;
    for (let i = 0; i < d; i++) {
      const ci = centred[i]!;
      if (ci === 0) continue;
      const base = i * d;
      for (let j = i; j < d; j++) cov[base + j]! += ci * centred[j]!;
    }
  }
  for (let i = 0; i < d; i++) for (let j = i; j < d; j++) cov[j * d + i] = cov[i * d + j]! /= n;
  const { values, vectors } = symmetricEigen(cov, d);
  const order = values.map((_, i) => i).sort((a, b) => values[b]! - values[a]!);
  const axes = order.slice(0, k).map((c) => {
    const axis = new Float64Array(d);
    for (let i = 0; i < d; i++) axis[i] = vectors[i * d + c]!;
    return axis;
  });
  return { mean, axes, variances: order.slice(0, k).map((c) => values[c]!) };
}

/**
 * Eigenvalues and eigenvectors (columns of `vectors`, row-major d × d) of the symmetric
 * d × d matrix `a`: Householder tridiagonalisation then the implicit QL method (tred2/tql2
 * as in JAMA, public domain). O(d³) once, well under a second for d = 512.
 */
export function symmetricEigen(a: Float64Array, d: number): { values: number[]; vectors: Float64Array } {
  const V = Float64Array.from(a);
  const at = (i: number, j: number) => i * d + j;
  const dd = new Float64Array(d);
  const e = new Float64Array(d);
  const n = d;
  for (let j = 0; j < n; j++) dd[j] = V[at(n - 1, j)]!;
  for (let i = n - 1; i > 0; i--) {
    let scale = 0;
    let h = 0;
    for (let k = 0; k < i; k++) scale += Math.abs(dd[k]!);
    if (scale === 0) {
      e[i] = dd[i - 1]!;
      for (let j = 0; j < i; j++) {
        dd[j] = V[at(i - 1, j)]!;
        V[at(i, j)] = 0;
        V[at(j, i)] = 0;
      }
    } else {
      for (let k = 0; k < i; k++) {
        dd[k]! /= scale;
        h += dd[k]! * dd[k]!;
      }
      let f = dd[i - 1]!;
      let g = Math.sqrt(h);
      if (f > 0) g = -g;
      e[i] = scale * g;
      h -= f * g;
      dd[i - 1] = f - g;
      for (let j = 0; j < i; j++) e[j] = 0;
      for (let j = 0; j < i; j++) {
        f = dd[j]!;
        V[at(j, i)] = f;
        g = e[j]! + V[at(j, j)]! * f;
        for (let k = j + 1; k <= i - 1; k++) {
          g += V[at(k, j)]! * dd[k]!;
          e[k]! += V[at(k, j)]! * f;
        }
        e[j] = g;
      }
      f = 0;
      for (let j = 0; j < i; j++) {
        e[j]! /= h;
        f += e[j]! * dd[j]!;
      }
      const hh = f / (h + h);
      for (let j = 0; j < i; j++) e[j]! -= hh * dd[j]!;
      for (let j = 0; j < i; j++) {
        f = dd[j]!;
        g = e[j]!;
        for (let k = j; k <= i - 1; k++) V[at(k, j)]! -= f * e[k]! + g * dd[k]!;
        dd[j] = V[at(i - 1, j)]!;
        V[at(i, j)] = 0;
      }
    }
    dd[i] = h;
  }
  for (let i = 0; i < n - 1; i++) {
    V[at(n - 1, i)] = V[at(i, i)]!;
    V[at(i, i)] = 1;
    const h = dd[i + 1]!;
    if (h !== 0) {
      for (let k = 0; k <= i; k++) dd[k] = V[at(k, i + 1)]! / h;
      for (let j = 0; j <= i; j++) {
        let g = 0;
        for (let k = 0; k <= i; k++) g += V[at(k, i + 1)]! * V[at(k, j)]!;
        for (let k = 0; k <= i; k++) V[at(k, j)]! -= g * dd[k]!;
      }
    }
    for (let k = 0; k <= i; k++) V[at(k, i + 1)] = 0;
  }
  for (let j = 0; j < n; j++) {
    dd[j] = V[at(n - 1, j)]!;
    V[at(n - 1, j)] = 0;
  }
  V[at(n - 1, n - 1)] = 1;
  e[0] = 0;
  // tql2
  for (let i = 1; i < n; i++) e[i - 1] = e[i]!;
  e[n - 1] = 0;
  let f = 0;
  let tst1 = 0;
  const eps = 2 ** -52;
  for (let l = 0; l < n; l++) {
    tst1 = Math.max(tst1, Math.abs(dd[l]!) + Math.abs(e[l]!));
    let m = l;
    while (m < n - 1 && Math.abs(e[m]!) > eps * tst1) m++;
    if (m > l) {
      do {
        let g = dd[l]!;
        let p = (dd[l + 1]! - g) / (2 * e[l]!);
        let r = Math.hypot(p, 1);
        if (p < 0) r = -r;
        dd[l] = e[l]! / (p + r);
        dd[l + 1] = e[l]! * (p + r);
        const dl1 = dd[l + 1]!;
        let h = g - dd[l]!;
        for (let i = l + 2; i < n; i++) dd[i]! -= h;
        f += h;
        p = dd[m]!;
        let c = 1;
        let c2 = c;
        let c3 = c;
        const el1 = e[l + 1]!;
        let s = 0;
        let s2 = 0;
        for (let i = m - 1; i >= l; i--) {
          c3 = c2;
          c2 = c;
          s2 = s;
          g = c * e[i]!;
          h = c * p;
          r = Math.hypot(p, e[i]!);
          e[i + 1] = s * r;
          s = e[i]! / r;
          c = p / r;
          p = c * dd[i]! - s * g;
          dd[i + 1] = h + s * (c * g + s * dd[i]!);
          for (let k = 0; k < n; k++) {
            h = V[at(k, i + 1)]!;
            V[at(k, i + 1)] = s * V[at(k, i)]! + c * h;
            V[at(k, i)] = c * V[at(k, i)]! - s * h;
          }
        }
        p = (-s * s2 * c3 * el1 * e[l]!) / dl1;
        e[l] = s * p;
        dd[l] = c * p;
      } while (Math.abs(e[l]!) > eps * tst1);
    }
    dd[l] = dd[l]! + f;
    e[l] = 0;
  }
  return { values: Array.from(dd), vectors: V };
}
