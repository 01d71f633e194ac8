import { classifyMongoError } from './errors.ts';

/** What the Mongo stores share: a once-only release of the shared client, and driver errors mapped to memgate codes. */
export abstract class MongoStoreBase {
  /** `release` is called once on the first `close()` (the factory shares one client between stores). */
  constructor(private release: () => Promise<void>) {}

  async close(): Promise<void> {
    const release = this.release;
    this.release = async () => {};
    await release();
  }

  protected async call<T>(op: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw classifyMongoError(err, op);
    }
  }
}
