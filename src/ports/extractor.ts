import type { ExtractionSchema } from '../core/extraction-schema.ts';
import type { FactSource, FactValue, Turn } from '../core/types.ts';

/** Stage 1 input: the turns to read facts from, the agent's schema, and what is already known. */
export interface ExtractionInput {
  schema: ExtractionSchema;
  turns: readonly Turn[];
  /** Current profile values: lets a model resolve "my name" or keep a qualifier consistent. */
  knownProfile: Readonly<Record<string, FactValue>>;
  /** System time (epoch ms). */
  now: number;
}

/** One fact a model extracted. The pipeline validates and normalises it against the schema. */
export interface ExtractedFact {
  field: string;
  /** Value of the field's `keyBy` qualifier, when the schema declares one. */
  qualifier?: string;
  /** Raw or normalised value; the pipeline normalises by the field's type. */
  value: FactValue;
  source: FactSource;
  /** World time the fact became true (ISO); the pipeline falls back to the evidence turn's ts. */
  validFrom?: string;
  /** Turn ids the fact was drawn from (at least one). */
  evidence: string[];
  /**
   * The speaker marked this value as a correction of an earlier one ("sorry, I meant",
   * "no, it's", "actually", "correction", "not X but Y"): it retracts the key's current
   * value instead of superseding it (docs/protocol.md, Memory semantics).
   */
  correction?: boolean;
  /**
   * The speaker says this value no longer holds and names nothing in its place ("I stopped
   * taking metformin"): the key's current record of this value ends at `validFrom`
   * (superseded, no successor). A value that is not current is left as it is.
   */
  ended?: boolean;
}

/** Stage 3 input: one segment of at most `segmentTurns` turns. */
export interface CompressionInput {
  turns: readonly Turn[];
  /** Display name of the user when known ("Rajiv Kumar"), to replace I/my. */
  userName?: string;
  /** Display name of the agent when known. */
  agentName?: string;
  now: number;
}

/** A self-contained fact drafted by stage 3 (before embedding and dedup). */
export interface AcuDraft {
  text: string;
  turnRefs: string[];
  /** World time the fact refers to (ISO); defaults to the segment's last turn. */
  validAt?: string;
}

/**
 * The language-model port: schema-driven extraction (stage 1) and ACU
 * compression (stage 3). Adapters: the offline rule-based default and any
 * OpenAI-compatible endpoint. Errors are MemgateErrors with `retryable` set.
 */
export interface Extractor {
  readonly id: string;
  extract(input: ExtractionInput): Promise<ExtractedFact[]>;
  compress(input: CompressionInput): Promise<AcuDraft[]>;
}
