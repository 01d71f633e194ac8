import { z } from 'zod';
import { MemgateError } from '../core/errors.ts';
import type { ExtractionSchema, FieldDef } from '../core/extraction-schema.ts';

/** Most fields one schema may declare: every field lands in each extraction prompt. */
export const MAX_SCHEMA_FIELDS = 200;

const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const CURRENCY_CODE = /^[A-Za-z]{3}$/;
const CURRENCY_MESSAGE = 'must be a three-letter ISO 4217 code (e.g. "INR")';

const fieldSpec = z
  .strictObject({
    name: z.string().max(64, 'at most 64 characters').regex(SNAKE_CASE, 'must be snake_case (e.g. "site_visit")'),
    category: z.enum(['profile', 'temporal', 'ephemeral']),
    type: z.enum(['string', 'number', 'money', 'date', 'datetime', 'boolean', 'enum']),
    description: z.string().trim().min(1, 'must not be empty').max(500, 'at most 500 characters'),
    hints: z.array(z.string().trim().min(1, 'must not be empty')).max(50).optional(),
    keyBy: z.string().trim().min(1, 'must not be empty').max(64).optional(),
    ttlHours: z
      .number()
      .positive('must be positive')
      .max(24 * 365, 'at most a year')
      .optional(),
    values: z.array(z.string().trim().min(1, 'must not be empty')).optional(),
    currency: z.string().regex(CURRENCY_CODE, CURRENCY_MESSAGE).optional(),
  })
  .superRefine((f, ctx) => {
    if (f.currency !== undefined && f.type !== 'money') {
      ctx.addIssue({ code: 'custom', path: ['currency'], message: `only allowed on money fields (this one is ${f.type})` });
    }
    if (f.type === 'enum' && (!f.values || f.values.length === 0)) {
      ctx.addIssue({ code: 'custom', path: ['values'], message: 'an enum field needs a non-empty list of values' });
    }
    if (f.type !== 'enum' && f.values !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['values'], message: `only allowed on enum fields (this one is ${f.type})` });
    }
    if (f.values && new Set(f.values).size !== f.values.length) {
      ctx.addIssue({ code: 'custom', path: ['values'], message: 'must not repeat a value' });
    }
    if (f.ttlHours !== undefined && f.category !== 'ephemeral') {
      ctx.addIssue({ code: 'custom', path: ['ttlHours'], message: `only meaningful for ephemeral fields (this one is ${f.category})` });
    }
  });

/** The zod shape of an extraction schema (docs/protocol.md "Extraction schema"), for callers that compose it. */
export const extractionSchemaSpec = z
  .strictObject({
    fields: z.array(fieldSpec).min(1, 'must declare at least one field').max(MAX_SCHEMA_FIELDS, `at most ${MAX_SCHEMA_FIELDS} fields`),
    currency: z.string().regex(CURRENCY_CODE, CURRENCY_MESSAGE).optional(),
  })
  .superRefine((s, ctx) => {
    const seen = new Map<string, number>();
    s.fields.forEach((f, i) => {
      const first = seen.get(f.name);
      if (first !== undefined) ctx.addIssue({ code: 'custom', path: ['fields', i, 'name'], message: `duplicate name "${f.name}" (also fields[${first}])` });
      else seen.set(f.name, i);
    });
  });

/**
 * Validate an agent's extraction schema (PUT body or config file). Returns a clean
 * copy (trimmed strings, no unknown keys); throws MemgateError('bad_request') whose
 * message names each bad field by path, e.g. `fields[2].type: Invalid option ...`,
 * so the caller can refuse it and keep the previous schema in force.
 */
export function parseExtractionSchema(input: unknown): ExtractionSchema {
  const parsed = extractionSchemaSpec.safeParse(input);
  if (!parsed.success) throw new MemgateError('bad_request', `invalid extraction schema: ${describeIssues(parsed.error.issues)}`, { cause: parsed.error });
  const schemaCurrency = parsed.data.currency?.toUpperCase();
  const schema: ExtractionSchema = {
    fields: parsed.data.fields.map((f) => {
      const def: FieldDef = { name: f.name, category: f.category, type: f.type, description: f.description };
      if (f.hints !== undefined) def.hints = f.hints;
      if (f.keyBy !== undefined) def.keyBy = f.keyBy;
      if (f.ttlHours !== undefined) def.ttlHours = f.ttlHours;
      if (f.values !== undefined) def.values = f.values;
      // The schema's currency is the deployment's: every money field without its own inherits it.
      const currency = f.currency?.toUpperCase() ?? (f.type === 'money' ? schemaCurrency : undefined);
      if (currency !== undefined) def.currency = currency;
      return def;
    }),
  };
  if (schemaCurrency !== undefined) schema.currency = schemaCurrency;
  return schema;
}

const MAX_REPORTED_ISSUES = 5;

function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  const shown = issues.slice(0, MAX_REPORTED_ISSUES).map((i) => `${pathOf(i.path)}: ${i.message}`);
  const more = issues.length - shown.length;
  return shown.join('; ') + (more > 0 ? `; and ${more} more` : '');
}

/** ['fields', 2, 'type'] → "fields[2].type"; the root is "schema". */
function pathOf(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out ? '.' : ''}${String(p)}`;
  return out || 'schema';
}
