/**
 * A local OpenAI-compatible HTTP server for tests and benchmarks: `POST /v1/chat/completions`
 * (plain or `stream: true` server-sent chunks, text or tool calls), `POST /v1/embeddings` and `GET /v1/models`
 * over real node:http, with scripted chat replies and failure modes.
 * Node built-ins only, because bench/ imports it too.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Global failure modes; `null` = answer normally. They win over scripted replies. */
export type FakeMode = 'garbage' | 'hang' | 'error500' | 'rate429' | null;

/**
 * A control reply (recognised when every key is one of these and `status`, `delayMs`, `mode`
 * or `content` is set). `content`: a string is sent raw, anything else JSON-stringified.
 */
export interface FakeControl {
  status?: number;
  message?: string;
  headers?: Record<string, string>;
  delayMs?: number;
  /** garbage: a 200 whose message is not JSON; truncated: a 200 whose HTTP body is cut-off JSON; hang: no answer. */
  mode?: 'garbage' | 'truncated' | 'hang';
  content?: unknown;
  finishReason?: string;
  /** Answer with these tool calls (finish reason `tool_calls`); `arguments` that are not a string are JSON-stringified. */
  toolCalls?: FakeToolCall[];
  /** With `stream: true`: a pause before each streamed piece after the first (a model speaking slowly, for barge-in). */
  chunkDelayMs?: number;
}

/** One scripted tool call of a chat reply. */
export interface FakeToolCall {
  name: string;
  arguments: unknown;
  id?: string;
}

/** A scripted chat reply: a string (raw content), a control object, or any JSON-able content. */
export type FakeChatReply = string | FakeControl | Record<string, unknown> | unknown[];

/** Builds the reply for one chat request from its parsed body. */
export type FakeChatHandler = (body: FakeChatBody) => FakeChatReply | Promise<FakeChatReply>;

/** The parts of a chat completion request body the fake and the tests look at. */
export interface FakeChatBody {
  model: string;
  messages: Array<{ role: string; content: string; tool_call_id?: string; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }> }>;
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  stream?: boolean;
  response_format?: { type: string; json_schema?: { name: string; strict?: boolean; schema: Record<string, unknown> } };
  [key: string]: unknown;
}

/** One recorded request. */
export interface FakeRequest {
  method: string;
  path: string;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/** Start-up options. */
export interface FakeOpenAIOptions {
  /** Embedding size when the request sends no `dimensions` (default 384). */
  dimensions?: number;
  /** Honour the request's `dimensions` like OpenAI (default true); false emulates a fixed-size model. */
  honorRequestedDimensions?: boolean;
  /** Delay before every chat reply (ms). */
  delayMs?: number;
  /** Delay before every embeddings reply (ms). */
  embeddingDelayMs?: number;
}

/** Handle on a running fake. */
export interface FakeOpenAI {
  /** Base URL including `/v1`, ready for `new OpenAI({ baseURL })`. */
  readonly url: string;
  readonly requests: FakeRequest[];
  /** Bodies of the chat completion requests, in arrival order. */
  readonly chatRequests: FakeChatBody[];
  /** Bodies of the embeddings requests, in arrival order. */
  readonly embeddingRequests: Array<Record<string, unknown>>;
  delayMs: number;
  embeddingDelayMs: number;
  dimensions: number;
  honorRequestedDimensions: boolean;
  mode: FakeMode;
  /** Handler used when the script queue is empty. */
  onChat(handler: FakeChatHandler | null): void;
  /** Queue replies consumed one per chat request before the handler. */
  scriptChat(replies: FakeChatReply[]): void;
  close(): Promise<void>;
}

const CONTROL_KEYS = new Set(['status', 'message', 'headers', 'delayMs', 'mode', 'content', 'finishReason', 'toolCalls', 'chunkDelayMs']);

/** Deterministic bag-of-words vector (not normalised): texts sharing words get a positive cosine. */
export function fakeEmbedding(text: string, dimensions: number): Float32Array {
  const out = new Float32Array(dimensions);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [''];
  for (const word of words) {
    let seed = createHash('sha256').update(word).digest().readUInt32LE(0);
    for (let i = 0; i < dimensions; i++) {
      // mulberry32: a cheap PRNG so each word maps to a fixed pseudo-random direction
      seed = (seed + 0x6d2b79f5) >>> 0;
      let t = seed;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      out[i]! += (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
    }
  }
  return out;
}

/** Start a fake on 127.0.0.1, on a free port. */
export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const queue: FakeChatReply[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let handler: FakeChatHandler | null = null;
  let completions = 0;

  const wait = (ms: number) =>
    ms <= 0
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          const t = setTimeout(() => {
            timers.delete(t);
            resolve();
          }, ms);
          timers.add(t);
        });

  const fake: FakeOpenAI = {
    url: '',
    requests: [],
    get chatRequests() {
      return fake.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body as FakeChatBody);
    },
    get embeddingRequests() {
      return fake.requests.filter((r) => r.path === '/v1/embeddings').map((r) => r.body as Record<string, unknown>);
    },
    delayMs: options.delayMs ?? 0,
    embeddingDelayMs: options.embeddingDelayMs ?? 0,
    dimensions: options.dimensions ?? 384,
    honorRequestedDimensions: options.honorRequestedDimensions ?? true,
    mode: null,
    onChat: (h) => {
      handler = h;
    },
    scriptChat: (replies) => {
      queue.push(...replies);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  const sendJson = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const sendError = (res: ServerResponse, status: number, message: string, headers?: Record<string, string>) =>
    sendJson(res, status, { error: { message, type: status === 429 ? 'rate_limit_error' : 'fake_error', code: null } }, headers);

  /** Applies a global mode; returns true when it answered (or deliberately never will). */
  const applyMode = (res: ServerResponse): boolean => {
    if (fake.mode === 'hang') return true;
    if (fake.mode === 'error500') sendError(res, 500, 'fake: internal error');
    else if (fake.mode === 'rate429') sendError(res, 429, 'fake: rate limited');
    else return false;
    return true;
  };

  const chat = async (body: FakeChatBody, res: ServerResponse) => {
    if (applyMode(res)) return;
    const scripted = queue.length > 0 ? queue.shift() : undefined;
    const reply = scripted !== undefined ? scripted : handler ? await handler(body) : defaultReply(body);
    const control: FakeControl = isControl(reply) ? reply : { content: reply };
    await wait(fake.delayMs + (control.delayMs ?? 0));
    if (control.mode === 'hang') return;
    if (control.mode === 'truncated') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end('{"id": "chatcmpl-cut", "choices": [');
    }
    if (control.status !== undefined && control.status >= 400) {
      return sendError(res, control.status, control.message ?? `fake: HTTP ${control.status}`, control.headers);
    }
    const content =
      fake.mode === 'garbage' || control.mode === 'garbage'
        ? 'Sure! Here are the facts you asked for: {facts: [oops'
        : typeof control.content === 'string'
          ? control.content
          : JSON.stringify(control.content ?? defaultReply(body));
    completions += 1;
    const id = `chatcmpl-fake-${completions}`;
    const created = Math.floor(Date.now() / 1000);
    const toolCalls = control.toolCalls?.map((c, index) => ({
      index,
      id: c.id ?? `call_fake_${completions}_${index}`,
      type: 'function' as const,
      function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}) },
    }));
    const finishReason = control.finishReason ?? (toolCalls ? 'tool_calls' : 'stop');
    const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
    if (body.stream === true) {
      // Server-sent chunks as OpenAI streams them: role + content (or tool calls), the finish reason, usage, [DONE].
      if (res.destroyed) return;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...control.headers });
      const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
        res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: body.model, choices, ...extra })}\n\n`);
      if (toolCalls) chunk([{ index: 0, delta: { role: 'assistant', content: null, tool_calls: toolCalls }, finish_reason: null }]);
      else
        for (const [i, piece] of splitWords(content).entries()) {
          if (i > 0 && control.chunkDelayMs) await wait(control.chunkDelayMs);
          if (res.destroyed) return;
          chunk([{ index: 0, delta: i === 0 ? { role: 'assistant', content: piece } : { content: piece }, finish_reason: null }]);
        }
      chunk([{ index: 0, delta: {}, finish_reason: finishReason }]);
      if ((body['stream_options'] as { include_usage?: boolean } | undefined)?.include_usage) chunk([], { usage });
      res.end('data: [DONE]\n\n');
      return;
    }
    const message = toolCalls ? { role: 'assistant', content: null, tool_calls: toolCalls.map(({ index: _i, ...c }) => c), refusal: null } : { role: 'assistant', content, refusal: null };
    sendJson(res, 200, { id, object: 'chat.completion', created, model: body.model, choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }], usage }, control.headers);
  };

  const embeddings = async (body: Record<string, unknown>, res: ServerResponse) => {
    if (applyMode(res)) return;
    await wait(fake.embeddingDelayMs);
    if (fake.mode === 'garbage') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end('{"object": "list", "data": [');
    }
    const inputs = Array.isArray(body.input) ? body.input : [body.input];
    const requested = typeof body.dimensions === 'number' && fake.honorRequestedDimensions ? body.dimensions : fake.dimensions;
    const base64 = body.encoding_format !== 'float';
    const data = inputs.map((input, index) => {
      const vec = fakeEmbedding(typeof input === 'string' ? input : JSON.stringify(input), requested);
      return { object: 'embedding', index, embedding: base64 ? float32ToBase64(vec) : Array.from(vec) };
    });
    sendJson(res, 200, { object: 'list', data, model: body.model, usage: { prompt_tokens: inputs.length, total_tokens: inputs.length } });
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      let body: unknown;
      try {
        body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      } catch {
        return sendError(res, 400, 'fake: request body is not JSON');
      }
      fake.requests.push({ method: req.method ?? 'GET', path, body, headers: req.headers });
      const route = `${req.method} ${path}`;
      const work =
        route === 'POST /v1/chat/completions'
          ? chat(body as FakeChatBody, res)
          : route === 'POST /v1/embeddings'
            ? embeddings(body as Record<string, unknown>, res)
            : route === 'GET /v1/models'
              ? Promise.resolve(sendJson(res, 200, { object: 'list', data: [{ id: 'fake-model', object: 'model', owned_by: 'memgate-tests' }] }))
              : Promise.resolve(sendError(res, 404, `fake: no route ${route}`));
      work.catch((err: unknown) => sendError(res, 500, `fake: handler threw: ${err instanceof Error ? err.message : String(err)}`));
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  (fake as { url: string }).url = `http://127.0.0.1:${port}/v1`;
  return fake;
}

/** A streamed reply arrives in a few pieces, as a real model's does: words with their trailing spaces. */
function splitWords(text: string): string[] {
  const pieces = text.match(/\S+\s*|\s+/g) ?? [];
  return pieces.length > 0 ? pieces : [''];
}

function isControl(reply: unknown): reply is FakeControl {
  if (reply === null || typeof reply !== 'object' || Array.isArray(reply)) return false;
  const keys = Object.keys(reply);
  if (keys.length === 0 || !keys.every((k) => CONTROL_KEYS.has(k))) return false;
  const r = reply as FakeControl;
  return typeof r.status === 'number' || typeof r.delayMs === 'number' || typeof r.mode === 'string' || 'content' in r || Array.isArray(r.toolCalls);
}

/** With a json_schema response format: the emptiest valid instance (`{facts: []}`); else "ok". */
function defaultReply(body: FakeChatBody): unknown {
  const schema = body.response_format?.json_schema?.schema;
  return schema ? emptyInstance(schema) : 'ok';
}

function emptyInstance(schema: Record<string, unknown>): unknown {
  const anyOf = schema['anyOf'];
  if (Array.isArray(anyOf) && anyOf.length > 0) return emptyInstance(anyOf[0] as Record<string, unknown>);
  const enumValues = schema['enum'];
  if (Array.isArray(enumValues) && enumValues.length > 0) return enumValues[0];
  const rawType = schema['type'];
  const type = Array.isArray(rawType) ? (rawType.includes('null') ? 'null' : rawType[0]) : rawType;
  switch (type) {
    case 'object': {
      const props = (schema['properties'] ?? {}) as Record<string, Record<string, unknown>>;
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, emptyInstance(v)]));
    }
    case 'array':
      return [];
    case 'string':
      return '';
    case 'number':
    case 'integer':
      return 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

/** Little-endian float32 bytes in base64: what OpenAI sends for `encoding_format: 'base64'`. */
function float32ToBase64(vec: Float32Array): string {
  const buf = Buffer.alloc(vec.length * 4);
  for (let i = 0; i < vec.length; i++) buf.writeFloatLE(vec[i]!, i * 4);
  return buf.toString('base64');
}
