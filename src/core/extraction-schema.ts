import type { Category } from './types.ts';

/** Field value types an extraction schema may declare (docs/protocol.md). */
export type FieldType = 'string' | 'number' | 'money' | 'date' | 'datetime' | 'boolean' | 'enum';

/** One field of an agent's extraction schema. */
export interface FieldDef {
  name: string;
  category: Category;
  type: FieldType;
  description: string;
  hints?: string[];
  /** Qualifier that lets one field hold several entities: key becomes `field:qualifier`. */
  keyBy?: string;
  /** Ephemeral only; default from config (24 h). */
  ttlHours?: number;
  /** Enum only. */
  values?: string[];
  /** Money only: ISO 4217 code of amounts said without a currency ("30,000"); a named one wins. */
  currency?: string;
}

/** The agent's extraction schema: the only agent-specific input of the pipeline. */
export interface ExtractionSchema {
  fields: FieldDef[];
  /** The deployment's currency: the default `currency` of every money field without its own. */
  currency?: string;
}
