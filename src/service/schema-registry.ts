import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Logger } from '../core/logger.ts';
import type { ExtractionSchema } from '../core/extraction-schema.ts';
import type { DocumentStore } from '../ports/document-store.ts';
import { parseExtractionSchema } from '../memory/extraction-schema-validation.ts';

/** A schema that extracts nothing agent-specific: used when no default.json exists. */
const EMPTY_SCHEMA: ExtractionSchema = { fields: [] };

/**
 * Resolves the schema in force for an agent: one stored through PUT (shared by
 * every process through the document store) wins over `config/schemas/<agentId>.json`,
 * which wins over `config/schemas/default.json`. Files are read and validated once at start.
 */
export class SchemaRegistry {
  private readonly files = new Map<string, ExtractionSchema>();

  constructor(
    private readonly documents: DocumentStore,
    dir: string,
    logger: Logger,
  ) {
    if (!existsSync(dir)) {
      logger.warn('schemas directory not found; agents without a stored schema extract no fields', { dir });
      return;
    }
    for (const name of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
      const path = join(dir, name);
      try {
        this.files.set(basename(name, '.json'), parseExtractionSchema(JSON.parse(readFileSync(path, 'utf8'))));
      } catch (err) {
        logger.error('invalid schema file ignored', { path, err });
      }
    }
  }

  /** The schema in force for the agent. */
  async get(tenantId: string, agentId: string): Promise<ExtractionSchema> {
    return (await this.documents.getSchema(tenantId, agentId)) ?? this.files.get(agentId) ?? this.files.get('default') ?? EMPTY_SCHEMA;
  }

  /** Validate and store a schema; the previous one stays in force when validation fails. */
  async put(tenantId: string, agentId: string, input: unknown): Promise<ExtractionSchema> {
    const schema = parseExtractionSchema(input);
    await this.documents.putSchema(tenantId, agentId, schema);
    return schema;
  }
}
