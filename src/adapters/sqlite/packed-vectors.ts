/** One stored vector: its row id and its Float32 little-endian bytes. */
export interface VectorRow {
  rid: number;
  embedding: Uint8Array;
}

/**
 * One user's vectors packed row-major in a single Float32Array, so a search is
 * one tight loop. Rows can be overwritten or appended in place (capacity
 * doubles), which lets an upsert patch the cache instead of forcing a reload.
 */
export class PackedVectors {
  /** Generation the user's rows started at (acu_scopes.since): a change means forget + rewrite, so reload. */
  since = 0;

  private data: Float32Array;
  private ids: Float64Array;
  private readonly rowOf = new Map<number, number>();
  private rows = 0;

  /** `version` is the user's write generation this content reflects (see SqliteAcuIndex). */
  constructor(
    readonly dim: number,
    public version: number,
    capacity = 16,
  ) {
    this.data = new Float32Array(Math.max(1, capacity) * dim);
    this.ids = new Float64Array(Math.max(1, capacity));
  }

  /**
   * Pack stored rows. The dimension is `dim` when given, else the first row's; rows of
   * another dimension (an embedder change) cannot be compared with a query and are skipped.
   */
  static fromRows(rows: readonly VectorRow[], version: number, dim = rows[0] ? rows[0].embedding.byteLength / 4 : 0): PackedVectors {
    const packed = new PackedVectors(dim, version, rows.length);
    for (const row of rows) if (row.embedding.byteLength === dim * 4) packed.setBytes(row.rid, row.embedding);
    return packed;
  }

  get count(): number {
    return this.rows;
  }

  /** The backing matrix; only the first `count` rows are meaningful. */
  get matrix(): Float32Array {
    return this.data;
  }

  get byteLength(): number {
    return this.data.byteLength + this.ids.byteLength;
  }

  /** Row id of matrix row `index`. */
  ridAt(index: number): number {
    return this.ids[index]!;
  }

  /** Overwrite the row of `rid`, or append it. The caller checks `vector.length === dim`. */
  set(rid: number, vector: Float32Array): void {
    const row = this.slot(rid); // before touching `data`: the slot may grow (replace) it
    this.data.set(vector, row * this.dim);
  }

  private setBytes(rid: number, bytes: Uint8Array): void {
    // Copied through a byte view: a Buffer read from SQLite need not be 4-byte aligned.
    const row = this.slot(rid);
    new Uint8Array(this.data.buffer).set(bytes, row * this.dim * 4);
  }

  private slot(rid: number): number {
    const existing = this.rowOf.get(rid);
    if (existing !== undefined) return existing;
    if (this.rows === this.ids.length) this.grow();
    const row = this.rows++;
    this.rowOf.set(rid, row);
    this.ids[row] = rid;
    return row;
  }

  private grow(): void {
    const capacity = this.ids.length * 2;
    const data = new Float32Array(capacity * this.dim);
    data.set(this.data);
    const ids = new Float64Array(capacity);
    ids.set(this.ids);
    this.data = data;
    this.ids = ids;
  }
}
