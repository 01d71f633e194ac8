/**
 * One structured-output chat call with memgate's bounded retry policy: the SDK's own retries
 * are off, so the attempt budget (1 + maxRetries) is spent here, on invalid output and on
 * retryable transport errors alike.
 */
import type OpenAI from 'openai';
import { z } from 'zod';
import type { MemgateError } from '../../core/errors.ts';
import { classifyOpenAiError, inPlaceRetryDelayMs, invalidOutput } from './errors.ts';

/** One chat request whose reply must be JSON matching `schema`. */
export interface StructuredRequest<T> {
  /** json_schema name (a-z, 0-9, _ and -), also used in error messages. */
  name: string;
  /** Strict wire schema sent as the response format (all keys required, nullable instead of optional). */
  wire: z.ZodType;
  /** Lenient schema validating the reply at this edge; may differ from `wire` to accept near misses. */
  parse: z.ZodType<T>;
  system: string;
  user: string;
}

/** Settings of the chat call. */
export interface StructuredChatOptions {
  model: string;
  maxRetries: number;
  /** null omits the parameter (some reasoning models reject anything but the default). */
  temperature: number | null;
}

/** JSON schema for OpenAI structured outputs from a zod schema (draft-7 subset, no `$schema`). */
export function toResponseJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { target: 'draft-7' }) as Record<string, unknown>;
  return rest;
}

/** Runs structured chat requests on a shared client. */
export class StructuredChat {
  constructor(
    private readonly client: OpenAI,
    private readonly options: StructuredChatOptions,
  ) {}

  /** The validated reply, or a MemgateError once the attempt budget is spent. */
  async complete<T>(req: StructuredRequest<T>): Promise<T> {
    const attempts = 1 + this.options.maxRetries;
    const op = `LLM ${req.name}`;
    const responseFormat = { type: 'json_schema' as const, json_schema: { name: req.name, strict: true, schema: toResponseJsonSchema(req.wire) } };
    let last: MemgateError | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      let content: string | null | undefined;
      try {
        const res = await this.client.chat.completions.create({
          model: this.options.model,
          messages: [
            { role: 'system', content: req.system },
            { role: 'user', content: req.user },
          ],
          response_format: responseFormat,
          ...(this.options.temperature === null ? {} : { temperature: this.options.temperature }),
        });
        content = res.choices[0]?.message.content;
      } catch (err) {
        last = classifyOpenAiError(err, op, `LLM at ${this.client.baseURL}`);
        const delayMs = inPlaceRetryDelayMs(err);
        if (delayMs === null || attempt === attempts) throw last;
        await sleep(delayMs);
        continue;
      }
      const parsed = parseReply(content, req.parse);
      if (parsed.ok) return parsed.value;
      last = invalidOutput(op, `attempt ${attempt}/${attempts}: ${parsed.reason}`, parsed.cause);
    }
    // attempts >= 1, so `last` is always set here
    throw last as MemgateError;
  }
}

type ParseResult<T> = { ok: true; value: T } | { ok: false; reason: string; cause?: unknown };

/** JSON.parse + zod; tolerates a markdown code fence, which some compatible servers add. */
function parseReply<T>(content: string | null | undefined, schema: z.ZodType<T>): ParseResult<T> {
  if (content === null || content === undefined || content.trim() === '') return { ok: false, reason: 'empty content' };
  const text = content.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/i, '$1');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: 'content is not JSON', cause: err };
  }
  const result = schema.safeParse(json);
  if (!result.success) {
    const first = result.error.issues[0];
    return { ok: false, reason: `schema mismatch at ${first?.path.join('.') || '(root)'}: ${first?.message ?? 'invalid'}`, cause: result.error };
  }
  return { ok: true, value: result.data };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
