const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
};

/**
 * Why a connection failed, in words ("connection refused"), from the socket error that
 * fetch and the SDKs built on it wrap (`TypeError: fetch failed`, cause `ECONNREFUSED`);
 * else the innermost cause's message (fetch refuses some ports outright: "bad port"),
 * else `fallback`.
 */
export function socketErrorReason(err: unknown, fallback: string): string {
  let innermost: string | null = null;
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as Error & { code?: unknown }).code;
    if (typeof code === 'string') return REASONS[code] ?? code;
    if (e !== err) innermost = e.message;
  }
  if (innermost === 'bad port') return 'fetch refuses this port (a port the Fetch standard blocks, such as 9 or 6000): use another';
  return innermost ?? fallback;
}
