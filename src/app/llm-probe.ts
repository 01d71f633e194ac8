import type { Config } from '../config/config-schema.ts';
import { socketErrorReason } from '../core/socket-errors.ts';

/** One row of `/v1/health`'s `servers` (the shape `reachability` gives). */
export interface ServerProbe {
  server: string;
  address: string;
  ok: boolean;
  problem: string | null;
  ms: number;
}

/** A base URL as it may be shown: scheme, host, port and path; never userinfo or query (they can hold keys). */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/$/, '')}`;
  } catch {
    return '(invalid URL)';
  }
}

/** What extracts and embeds, for the start-up log: names and the endpoints' base URLs, never keys. */
export function describeEngine(config: Readonly<Config>): Record<string, string> {
  const { extractor, embedder } = config.adapters;
  const out: Record<string, string> = { extractor: extractor === 'openai' ? `openai (${config.llm.model})` : extractor, embedder };
  if (extractor === 'openai') out['llm'] = displayUrl(config.llm.baseURL);
  if (embedder === 'openai') out['embeddings'] = `${displayUrl(config.embeddings.baseURL)} (${config.embeddings.model})`;
  return out;
}

interface Endpoint {
  server: string;
  baseURL: string;
  apiKey: string;
}

/**
 * The OpenAI-compatible endpoints the configuration calls, probed with `GET {baseURL}/models`
 * (cheap, and every compatible server has it): any HTTP answer but 401/403 or 5xx is reachable.
 * Each answer is kept `ttlMs`, so a dashboard polling `/v1/health` does not poll the LLM.
 */
export function llmProbes(config: Readonly<Config>, options: { timeoutMs?: number; ttlMs?: number } = {}): () => Promise<ServerProbe[]> {
  const endpoints: Endpoint[] = [];
  if (config.adapters.extractor === 'openai') endpoints.push({ server: 'LLM', baseURL: config.llm.baseURL, apiKey: config.llm.apiKey });
  if (config.adapters.embedder === 'openai') endpoints.push({ server: 'embeddings', baseURL: config.embeddings.baseURL, apiKey: config.embeddings.apiKey });
  const timeoutMs = options.timeoutMs ?? 1_000;
  const ttlMs = options.ttlMs ?? 10_000;
  const cached = new Map<string, { at: number; probe: Promise<ServerProbe> }>();
  return () =>
    Promise.all(
      endpoints.map((e) => {
        const hit = cached.get(e.server);
        if (hit && performance.now() - hit.at < ttlMs) return hit.probe;
        const probe = probeModels(e, timeoutMs);
        cached.set(e.server, { at: performance.now(), probe });
        return probe;
      }),
    );
}

async function probeModels(e: Endpoint, timeoutMs: number): Promise<ServerProbe> {
  const address = displayUrl(e.baseURL);
  const t0 = performance.now();
  const done = (problem: string | null): ServerProbe => ({ server: e.server, address, ok: problem === null, problem, ms: Math.round((performance.now() - t0) * 10) / 10 });
  try {
    const res = await fetch(`${e.baseURL.replace(/\/$/, '')}/models`, { headers: { authorization: `Bearer ${e.apiKey}` }, signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    if (res.status === 401 || res.status === 403) return done(`answers HTTP ${res.status}: is the API key right?`);
    if (res.status >= 500) return done(`answers HTTP ${res.status}`);
    return done(null);
  } catch (err) {
    if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return done(`${e.server} at ${address} unreachable: no answer within ${timeoutMs} ms`);
    return done(`${e.server} at ${address} unreachable: ${socketErrorReason(err, err instanceof Error ? err.message : String(err))}`);
  }
}
