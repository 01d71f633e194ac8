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
  /** Agents already reported as falling back (tenant + agent), so the log says it once per agent. */
  private readonly fellBack = new Set<string>();

  constructor(
    private readonly documents: DocumentStore,
    dir: string,
    private readonly logger: Logger,
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
    const own = (await this.documents.getSchema(tenantId, agentId)) ?? this.files.get(agentId);
    if (own) return own;
    const fallback = this.files.get('default');
    this.reportFallback(tenantId, agentId, fallback ? 'default' : 'none');
    return fallback ?? EMPTY_SCHEMA;
  }

  /** A misspelt agent id silently extracts with the wrong fields: say so once per agent. */
  private reportFallback(tenantId: string, agentId: string, schema: 'default' | 'none'): void {
    const key = `${tenantId}\n${agentId}`;
    if (this.fellBack.has(key)) return;
    // Bounded: an unbounded set of agent ids would grow with every new id a client makes up.
    if (this.fellBack.size >= 10_000) this.fellBack.clear();
    this.fellBack.add(key);
    this.logger.info(
      schema === 'default' ? 'agent has no extraction schema of its own; using config/schemas/default.json' : 'agent has no extraction schema and there is no default; no fields are extracted',
      {
        tenantId,
        agentId,
        schema,
        ...(schema === 'default' ? { known: [...this.files.keys()].filter((k) => k !== 'default') } : {}),
      },
    );
  }

  /** Validate and store a schema; the previous one stays in force when validation fails. */
  async put(tenantId: string, agentId: string, input: unknown): Promise<ExtractionSchema> {
    const schema = parseExtractionSchema(input);
    await this.documents.putSchema(tenantId, agentId, schema);
    return schema;
  }
}
