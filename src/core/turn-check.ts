import { ROLES, type Turn } from './types.ts';

/**
 * The world times a turn's `ts` (and a search's `asOf`) may carry: 1970-01-01
 * up to, not including, 2100-01-01 UTC. The edge refuses anything outside, and
 * the pipeline quarantines a stored turn outside it: a value past the largest
 * Date (8.64e15 ms) makes every later extraction of that user fail on date
 * arithmetic.
 */
export const MIN_TS_MS = 0;
export const MAX_TS_MS = Date.UTC(2100, 0, 1);
export const TS_RANGE = 'between 1970-01-01 and 2100-01-01 UTC';

/** Whether `ms` is a finite epoch-ms time inside the window. */
export function inTsWindow(ms: number): boolean {
  return Number.isFinite(ms) && ms >= MIN_TS_MS && ms < MAX_TS_MS;
}

const ROLE_SET: ReadonlySet<unknown> = new Set(ROLES);

/** A string with no lone surrogate (ES2024's isWellFormed; the project's lib is ES2023). */
export function isWellFormedString(v: unknown): v is string {
  return typeof v === 'string' && (v as string & { isWellFormed(): boolean }).isWellFormed();
}

/**
 * Text with nothing to say: empty, or only whitespace, invisible format characters (zero-width
 * space and joiners, BOM, soft hyphen: `\s` misses most of them) and control characters. Such a
 * turn would read as "- [date] user: " in the context block. Refused at the edge; a stored one is
 * quarantined.
 */
export function isBlankText(text: string): boolean {
  return !/[^\s\p{Cf}\p{Cc}]/u.test(text);
}

/**
 * Why a stored turn cannot go through extraction, or null when it can. The
 * edge refuses all of these, so a turn that has one came from an older
 * version, another writer or a damaged store: it is quarantined instead of
 * failing its user's every later extraction.
 */
export function turnDefect(t: Turn): string | null {
  const r = t as unknown as Record<string, unknown>;
  if (!isWellFormedString(r['turnId']) || r['turnId'] === '') return 'turnId is not a non-empty, well-formed string';
  if (typeof r['seq'] !== 'number' || !Number.isSafeInteger(r['seq'])) return 'seq is not an integer';
  if (!isWellFormedString(r['sessionId']) || r['sessionId'] === '') return 'sessionId is not a non-empty, well-formed string';
  if (!ROLE_SET.has(r['role'])) return 'role is not one of user, agent, system, tool';
  if (!isWellFormedString(r['text'])) return 'text is not a well-formed string';
  if (isBlankText(r['text'])) return 'text is empty or whitespace only';
  if (typeof r['ts'] !== 'number' || !inTsWindow(r['ts'])) return `ts ${String(r['ts'])} is not epoch milliseconds ${TS_RANGE}`;
  if (typeof r['receivedAt'] !== 'number' || !inTsWindow(r['receivedAt'])) return `receivedAt ${String(r['receivedAt'])} is not epoch milliseconds ${TS_RANGE}`;
  if (typeof r['tokens'] !== 'number' || !(r['tokens'] >= 0 && Number.isFinite(r['tokens']))) return 'tokens is not a finite count';
  const speaker = r['speaker'];
  if (speaker !== undefined && speaker !== null && !isWellFormedString(speaker)) return 'speaker is not a well-formed string';
  const asr = r['asrConfidence'];
  if (asr !== undefined && asr !== null && !(typeof asr === 'number' && asr >= 0 && asr <= 1)) return 'asrConfidence is not a number between 0 and 1';
  const interrupted = r['interrupted'];
  if (interrupted !== undefined && interrupted !== null && typeof interrupted !== 'boolean') return 'interrupted is not a boolean';
  return null;
}
