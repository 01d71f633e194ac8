import type { HotDocument, Scope } from '../core/types.ts';
import type { ExtractionSchema } from '../core/extraction-schema.ts';

/**
 * Hot documents (one per agent+user) and agent schemas. Commits are
 * compare-and-set on `version`: a worker whose lock expired and whose read is
 * stale cannot overwrite a newer commit (the fencing check of docs/design.md §3).
 */
export interface DocumentStore {
  /** The user's hot document, or null before the first commit. */
  getHot(scope: Scope): Promise<HotDocument | null>;
  /**
   * Write `doc` (whose `version` must be `expectedVersion + 1`) only if the stored
   * version is still `expectedVersion` (0 = no document yet). Returns false on conflict.
   */
  commitHot(doc: HotDocument, expectedVersion: number): Promise<boolean>;
  /** The agent's stored schema (set through PUT), or null to fall back to config files. */
  getSchema(tenantId: string, agentId: string): Promise<ExtractionSchema | null>;
  putSchema(tenantId: string, agentId: string, schema: ExtractionSchema): Promise<void>;
  forget(scope: Scope): Promise<void>;
  close(): Promise<void>;
}
