import OpenAI from 'openai';
import { silentLogger } from '../../core/logger.ts';
import type { Logger } from '../../core/logger.ts';
import type { AcuDraft, CompressionInput, ExtractedFact, ExtractionInput, Extractor } from '../../ports/extractor.ts';
import { buildCompressionPrompt } from './compression-prompt.ts';
import { compressionReplySchema, compressionWireSchema, toAcuDrafts } from './compression-output.ts';
import { buildExtractionPrompt } from './extraction-prompt.ts';
import { extractionReplySchema, extractionWireSchema, toExtractedFacts } from './extraction-output.ts';
import { StructuredChat } from './structured-chat.ts';
import { CONFIG_DEFAULTS } from '../../config/config-schema.ts';

/** Settings of an OpenAI-compatible chat endpoint (config `llm`). */
export interface OpenAiExtractorOptions {
  /** Base URL including the version path, e.g. `https://api.openai.com/v1`. */
  baseURL: string;
  apiKey: string;
  model: string;
  /** Per request. Timeouts are not retried in place (the worker redelivers the job). */
  timeoutMs: number;
  /** Extra attempts after invalid output or a retryable HTTP error. */
  maxRetries: number;
  /** Sampling temperature (default 0, for repeatable extraction); null leaves the server default. */
  temperature?: number | null;
  /** User turns heard with less confidence than this yield at most `inferred` facts (default: config `memory.lowAsrConfidence`). */
  lowAsrConfidence?: number;
  logger?: Logger;
}

/**
 * Stage 1 and stage 3 on any OpenAI-compatible chat endpoint with structured outputs
 * (`response_format: json_schema`, strict). Replies are validated here: facts naming unknown
 * fields or citing no input turn are dropped; replies that are not JSON of the right shape are
 * retried, then fail as retryable `unavailable` so the window stays hot.
 */
export class OpenAiExtractor implements Extractor {
  readonly id: string;
  private readonly chat: StructuredChat;
  private readonly log: Logger;
  private readonly lowAsr: number;

  constructor(options: OpenAiExtractorOptions) {
    this.id = `openai:${options.model}`;
    this.log = (options.logger ?? silentLogger).child({ component: 'openai-extractor' });
    this.lowAsr = options.lowAsrConfidence ?? CONFIG_DEFAULTS.memory.lowAsrConfidence;
    // SDK retries off: the attempt budget is ours (StructuredChat) so invalid output counts too.
    const client = new OpenAI({ baseURL: options.baseURL, apiKey: options.apiKey, timeout: options.timeoutMs, maxRetries: 0 });
    this.chat = new StructuredChat(client, {
      model: options.model,
      maxRetries: options.maxRetries,
      temperature: options.temperature === undefined ? 0 : options.temperature,
    });
  }

  /** Schema-driven facts from the turns; [] without a call when there is nothing to read or fill. */
  async extract(input: ExtractionInput): Promise<ExtractedFact[]> {
    const [first, ...rest] = input.schema.fields.map((f) => f.name);
    if (first === undefined || input.turns.length === 0) return [];
    const { system, user } = buildExtractionPrompt(input);
    const reply = await this.chat.complete({ name: 'extracted_facts', wire: extractionWireSchema([first, ...rest]), parse: extractionReplySchema, system, user });
    const { facts, dropped } = toExtractedFacts(reply.facts, input, this.lowAsr);
    if (dropped > 0) this.log.debug('dropped extracted facts', { dropped, kept: facts.length });
    return facts;
  }

  /** Atomic Context Units for one segment; [] without a call for an empty segment. */
  async compress(input: CompressionInput): Promise<AcuDraft[]> {
    if (input.turns.length === 0) return [];
    const { system, user } = buildCompressionPrompt(input);
    const reply = await this.chat.complete({ name: 'atomic_context_units', wire: compressionWireSchema, parse: compressionReplySchema, system, user });
    const { acus, dropped } = toAcuDrafts(reply.acus, input);
    if (dropped > 0) this.log.debug('dropped ACU drafts', { dropped, kept: acus.length });
    return acus;
  }
}
