import OpenAI from 'openai';
import { MemgateError } from '../../core/errors.ts';
import type { Embedder } from '../../ports/embedder.ts';
import { classifyOpenAiError, inPlaceRetryDelayMs, invalidOutput } from './errors.ts';
import { CONFIG_DEFAULTS } from '../../config/config-schema.ts';

/** Inputs per request: OpenAI accepts up to 2,048, but smaller batches fail and retry cheaper. */
const MAX_BATCH = 256;

/** Settings of an OpenAI-compatible embeddings endpoint (config `embeddings`). */
export interface OpenAiEmbedderOptions {
  baseURL: string;
  apiKey: string;
  model: string;
  /** Vector size the index expects; every returned vector is checked against it. */
  dimensions: number;
  timeoutMs: number;
  /** Extra attempts after a retryable HTTP error (default: config `llm.maxRetries`); timeouts are not retried in place. */
  maxRetries?: number;
  /** Send `dimensions` in the request (default true); off for servers that reject the parameter. */
  requestDimensions?: boolean;
  /** Wire encoding (default 'float'); 'base64' is smaller on the wire and decoded here. */
  encodingFormat?: 'float' | 'base64';
  /** Inputs per request, at most 256. */
  batchSize?: number;
}

/** Embeddings from any OpenAI-compatible endpoint, L2-normalised, dimension-checked. */
export class OpenAiEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  private readonly client: OpenAI;
  private readonly maxRetries: number;
  private readonly batchSize: number;

  constructor(private readonly options: OpenAiEmbedderOptions) {
    if (!Number.isInteger(options.dimensions) || options.dimensions <= 0) {
      throw new MemgateError('internal', `embeddings.dimensions must be a positive integer, got ${options.dimensions}`);
    }
    this.id = `openai:${options.model}:${options.dimensions}`;
    this.dimensions = options.dimensions;
    this.maxRetries = options.maxRetries ?? CONFIG_DEFAULTS.llm.maxRetries;
    this.batchSize = Math.max(1, Math.min(options.batchSize ?? MAX_BATCH, MAX_BATCH));
    this.client = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey, timeout: options.timeoutMs, maxRetries: 0 });
  }

  /** One unit vector per text, in order; batches run one after another to bound endpoint load. */
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) {
      out.push(...(await this.embedBatch(texts.slice(i, i + this.batchSize))));
    }
    return out;
  }

  private async embedBatch(batch: string[]): Promise<Float32Array[]> {
    const attempts = 1 + this.maxRetries;
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await this.client.embeddings.create({
          model: this.options.model,
          input: batch,
          encoding_format: this.options.encodingFormat ?? 'float',
          ...(this.options.requestDimensions === false ? {} : { dimensions: this.dimensions }),
        });
        return this.toVectors(res.data, batch.length);
      } catch (err) {
        const delayMs = inPlaceRetryDelayMs(err);
        if (delayMs === null || attempt >= attempts) throw classifyOpenAiError(err, 'embeddings', `embeddings endpoint at ${this.client.baseURL}`);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
    }
  }

  private toVectors(data: ReadonlyArray<{ index: number; embedding: unknown }>, expected: number): Float32Array[] {
    if (!Array.isArray(data) || data.length !== expected) {
      throw invalidOutput('embeddings', `expected ${expected} vectors, got ${Array.isArray(data) ? data.length : typeof data}`);
    }
    const out = new Array<Float32Array>(expected);
    for (const item of data) {
      // Servers may answer out of order: `index` is the contract, not position.
      if (!Number.isInteger(item.index) || item.index < 0 || item.index >= expected) {
        throw invalidOutput('embeddings', `vector index ${String(item.index)} out of range`);
      }
      const vec = decode(item.embedding);
      if (!vec || !vec.every(Number.isFinite)) throw invalidOutput('embeddings', `vector ${item.index} is not finite floats (array or base64 float32)`);
      if (vec.length !== this.dimensions) {
        throw new MemgateError(
          'internal',
          `embeddings: model ${this.options.model} returned ${vec.length} dimensions, configured ${this.dimensions}; set embeddings.dimensions to ${vec.length} (and re-index) or pick a model that supports ${this.dimensions}`,
          { retryable: false },
        );
      }
      out[item.index] = normalise(vec);
    }
    for (let i = 0; i < expected; i++) if (!out[i]) throw invalidOutput('embeddings', `no vector for input ${i}`);
    return out;
  }
}

/** number[] (float), a base64 float32 string, or a Float32Array (the SDK's own base64 decoding). */
function decode(embedding: unknown): Float32Array | null {
  if (embedding instanceof Float32Array) return embedding;
  if (Array.isArray(embedding)) return embedding.every((x) => typeof x === 'number') ? Float32Array.from(embedding as number[]) : null;
  if (typeof embedding === 'string') {
    const buf = Buffer.from(embedding, 'base64');
    if (buf.length % 4 !== 0) return null;
    const vec = new Float32Array(buf.length / 4);
    for (let i = 0; i < vec.length; i++) vec[i] = buf.readFloatLE(i * 4);
    return vec;
  }
  return null;
}

/** Unit length, so cosine is a dot product downstream; an all-zero vector stays zero. */
function normalise(vec: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vec.length; i++) sum += vec[i]! * vec[i]!;
  const norm = Math.sqrt(sum);
  if (norm === 0) return vec;
  const out = new Float32Array(vec.length);
  for (let i = 0; i < vec.length; i++) out[i] = vec[i]! / norm;
  return out;
}
