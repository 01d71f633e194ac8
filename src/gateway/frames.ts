import { z } from 'zod';
import { MemgateError, badRequest } from '../core/errors.ts';
import type { Role, TurnInput } from '../core/types.ts';
import { inTsWindow, isBlankText, TS_RANGE } from '../core/turn-check.ts';
import { MAX_ID_CHARS } from '../core/ids.ts';

/**
 * Request validation shared by the WebSocket ops and the HTTP routes. Append
 * is validated by hand (it runs per turn on the hot path); the rarer requests
 * use zod schemas whose first issue becomes the `bad_request` message.
 */

const MAX_SPEAKER_CHARS = 256;
const MAX_QUERY_CHARS = 4096;

/** A request id as echoed in replies: string, number, or null when the frame had none. */
export type RequestId = string | number | null;

/** The frame's `id`, null when absent; `undefined` when present but not a string or number. */
export function readId(frame: Record<string, unknown>): RequestId | undefined {
  const id = frame['id'];
  if (id === undefined || id === null) return null;
  if (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))) return id;
  return undefined;
}

const ROLE_SET: ReadonlySet<string> = new Set<Role>(['user', 'agent', 'system', 'tool']);

function isId(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= MAX_ID_CHARS;
}

/** UTF-8 byte length without allocating: exact only when it could matter. */
function exceedsBytes(text: string, maxBytes: number): boolean {
  if (text.length > maxBytes) return true; // every UTF-16 unit is at least one UTF-8 byte
  if (text.length * 3 <= maxBytes) return false; // and at most three
  return Buffer.byteLength(text, 'utf8') > maxBytes;
}

/** `ts`: epoch milliseconds or an ISO-8601 string (a MessagePack timestamp decodes to a Date). */
function parseTs(v: unknown): number {
  let ms = Number.NaN;
  if (typeof v === 'number') ms = v;
  else if (typeof v === 'string' && v.length > 0 && v.length <= 64) ms = Date.parse(v);
  else if (v instanceof Date) ms = v.getTime();
  if (inTsWindow(ms)) return ms;
  throw badRequest(`ts must be an ISO-8601 string or epoch milliseconds ${TS_RANGE}`);
}

/**
 * Validate an append (WS frame or HTTP body) into a TurnInput. Every string in
 * it was already checked as valid UTF-8 when the frame or body was decoded.
 */
export function parseTurn(f: Record<string, unknown>, maxTurnBytes: number): TurnInput {
  const role = f['role'];
  if (typeof role !== 'string' || !ROLE_SET.has(role)) throw badRequest('role must be one of user, agent, system, tool');
  const text = f['text'];
  if (typeof text !== 'string') throw badRequest('text must be a string');
  // A blank turn says nothing, yet would take a line of the context block and a slot in extraction.
  if (isBlankText(text)) throw badRequest('text must not be empty or whitespace only');
  if (exceedsBytes(text, maxTurnBytes)) throw new MemgateError('too_large', `text exceeds ${maxTurnBytes} bytes`);
  const turnId = f['turnId'];
  if (turnId !== undefined && !isId(turnId)) throw badRequest(`turnId must be a non-empty string of at most ${MAX_ID_CHARS} characters`);
  const speaker = f['speaker'];
  if (speaker !== undefined && (typeof speaker !== 'string' || speaker.length > MAX_SPEAKER_CHARS)) throw badRequest(`speaker must be a string of at most ${MAX_SPEAKER_CHARS} characters`);
  const asr = f['asrConfidence'];
  if (asr !== undefined && (typeof asr !== 'number' || !(asr >= 0 && asr <= 1))) throw badRequest('asrConfidence must be a number between 0 and 1');
  const interrupted = f['interrupted'];
  if (interrupted !== undefined && typeof interrupted !== 'boolean') throw badRequest('interrupted must be a boolean');
  const ts = f['ts'];
  // One literal with every key keeps the object shape monomorphic for the service.
  return {
    role: role as Role,
    text,
    turnId: turnId as string | undefined,
    ts: ts === undefined ? undefined : parseTs(ts),
    speaker: speaker as string | undefined,
    asrConfidence: asr as number | undefined,
    interrupted: interrupted as boolean | undefined,
  };
}

const scopeId = z.string().min(1).max(MAX_ID_CHARS);
const startSchema = z.object({ agentId: scopeId, userId: scopeId, sessionId: scopeId.optional() });
const searchSchema = z.object({
  query: z.string().min(1).max(MAX_QUERY_CHARS),
  k: z.int().min(1).max(100).optional(),
  deadlineMs: z.number().positive().max(60_000).optional(),
  // ISO-8601 or epoch ms, like a turn's `ts`; handed on as epoch ms.
  asOf: z
    .union([z.number().finite(), z.string().min(1).max(64)])
    .transform((v, ctx) => {
      const ms = typeof v === 'number' ? v : Date.parse(v);
      if (inTsWindow(ms)) return ms;
      ctx.addIssue({ code: 'custom', message: `asOf must be an ISO-8601 time or epoch milliseconds ${TS_RANGE}` });
      return z.NEVER;
    })
    .optional(),
});
const searchBodySchema = searchSchema.extend({ agentId: scopeId, userId: scopeId });
const topicsSchema = z.object({
  topics: z
    .array(
      z
        .string()
        .min(1)
        .max(3 * MAX_ID_CHARS),
    )
    .min(1)
    .max(64),
});

/** Session start fields (WS `start`, HTTP `POST /v1/sessions`). */
export type StartRequest = z.infer<typeof startSchema>;
/** Search fields of the WS `search` op. */
export type SearchRequest = z.infer<typeof searchSchema>;
/** Body of HTTP `POST /v1/search`. */
export type SearchBody = z.infer<typeof searchBodySchema>;

function parseWith<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const where = issue && issue.path.length > 0 ? issue.path.join('.') : 'body';
  throw badRequest(`${where}: ${issue?.message ?? 'invalid'}`);
}

/** Validate a session start. */
export function parseStart(value: unknown): StartRequest {
  return parseWith(startSchema, value);
}

/** Validate a WS search. */
export function parseSearch(value: unknown): SearchRequest {
  return parseWith(searchSchema, value);
}

/** Validate an HTTP search body. */
export function parseSearchBody(value: unknown): SearchBody {
  return parseWith(searchBodySchema, value);
}

/** Validate the topic list of `subscribe` / `unsubscribe` (topic syntax is checked by the event relay). */
export function parseTopics(value: unknown): string[] {
  return parseWith(topicsSchema, value).topics;
}

/** Validate a scope id taken from a URL path. */
export function checkScopeId(name: string, value: string): string {
  if (!isId(value)) throw badRequest(`${name} must be a non-empty string of at most ${MAX_ID_CHARS} characters`);
  return value;
}
