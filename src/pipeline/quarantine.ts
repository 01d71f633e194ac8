import type { Clock } from '../core/clock.ts';
import { iso } from '../core/clock.ts';
import { MemgateError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import { turnDefect } from '../core/turn-check.ts';
import type { HotDocument, QuarantinedTurn, Scope, Turn } from '../core/types.ts';
import type { ExtractionPorts } from '../ports/index.ts';

/** Quarantine records a hot document keeps (oldest dropped first): the list must not grow a user's document without bound. */
export const MAX_QUARANTINED = 100;
const MAX_TEXT_CHARS = 2000;

/** A buffered turn the pipeline cannot process, with why. */
export interface DefectiveTurn {
  turn: Turn;
  reason: string;
}

/** Split buffered turns into those extraction can process and those it would fail on. */
export function splitDefective(turns: readonly Turn[]): { good: Turn[]; defective: DefectiveTurn[] } {
  const good: Turn[] = [];
  const defective: DefectiveTurn[] = [];
  for (const turn of turns) {
    const reason = turnDefect(turn);
    if (reason === null) good.push(turn);
    else defective.push({ turn, reason });
  }
  return { good, defective };
}

/** A JSON-safe copy of a stored turn's fields: whatever broke it must not break the document store or the reply. */
export function quarantineRecord(d: DefectiveTurn, now: number): QuarantinedTurn {
  const turn: QuarantinedTurn['turn'] = {};
  for (const [k, v] of Object.entries(d.turn as unknown as Record<string, unknown>)) {
    if (typeof v === 'string') turn[k] = toWellFormed(k === 'text' ? v.slice(0, MAX_TEXT_CHARS) : v.slice(0, 256));
    else if (typeof v === 'number') turn[k] = Number.isFinite(v) ? v : null;
    else if (typeof v === 'boolean' || v === null) turn[k] = v;
    else if (v !== undefined) turn[k] = toWellFormed(String(v).slice(0, 256));
  }
  return { turnId: idOf(d.turn), reason: d.reason, quarantinedAt: iso(now), turn };
}

/** The id the buffer holds the turn under (a damaged record may carry a non-string one). */
export function idOf(turn: Turn): string {
  return toWellFormed(String((turn as { turnId: unknown }).turnId));
}

function toWellFormed(s: string): string {
  return (s as string & { toWellFormed(): string }).toWellFormed();
}

/** What quarantining needs from the extraction run. */
export interface QuarantineDeps {
  ports: ExtractionPorts;
  clock: Clock;
  logger: Logger;
}

/**
 * Move defective turns out of the user's buffer into the hot document's
 * quarantine list, under the run's lease: the record is committed first (a
 * compare-and-set like every commit), then the turns leave the buffer, so a
 * crash in between quarantines them again on the next run and loses nothing.
 * Each one is logged and published as a `turn.quarantined` event (the gateway
 * counts them in /metrics). Returns the document as committed.
 */
export async function quarantineTurns(deps: QuarantineDeps, scope: Scope, doc: HotDocument, defective: readonly DefectiveTurn[], stillHeld: () => Promise<boolean>): Promise<HotDocument> {
  const now = deps.clock.now();
  const known = new Set((doc.quarantined ?? []).map((q) => q.turnId));
  const fresh = defective.filter((d) => !known.has(idOf(d.turn)));
  let next = doc;
  if (fresh.length > 0) {
    const gone = new Set(fresh.map((d) => idOf(d.turn)));
    // A kept turn leaves `recent` with the buffer: the leftover check expects every kept turn still buffered.
    next = {
      ...doc,
      recent: doc.recent.filter((t) => !gone.has(t.turnId)),
      quarantined: [...(doc.quarantined ?? []), ...fresh.map((d) => quarantineRecord(d, now))].slice(-MAX_QUARANTINED),
      version: doc.version + 1,
      updatedAt: iso(now),
    };
    if (!(await stillHeld())) throw new MemgateError('conflict', 'extraction lease expired before quarantine');
    if (!(await deps.ports.documents.commitHot(next, doc.version))) throw new MemgateError('conflict', 'hot document changed during quarantine');
  }
  // Already-recorded ones too: an earlier run committed them and died before this removal.
  await deps.ports.buffer.remove(
    scope,
    defective.map((d) => idOf(d.turn)),
  );
  for (const d of fresh) {
    const turnId = idOf(d.turn);
    deps.logger.warn('turn quarantined', { tenantId: scope.tenantId, agentId: scope.agentId, userId: scope.userId, turnId, reason: d.reason });
    deps.ports.events.publish({ type: 'turn.quarantined', tenantId: scope.tenantId, agentId: scope.agentId, userId: scope.userId, at: now, data: { turnId, reason: d.reason } });
  }
  return next;
}
