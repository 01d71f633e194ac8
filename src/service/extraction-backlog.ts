import type { Scope } from '../core/types.ts';
import { jobKey } from '../ports/job-bus.ts';

/** One user's turns acked here and not yet read by a committed extraction, oldest first. */
interface UserBacklog {
  scope: Scope;
  seqs: number[];
  tokens: number[];
  receivedAt: number[];
  /** Index of the oldest live entry (entries before it were read; compacted now and then). */
  head: number;
  tokenSum: number;
  /** An `extraction.backlog` "behind" event went out and no "caught-up" since. */
  behind: boolean;
}

/** One user's backlog as the routes show it. */
export interface UserBacklogView {
  agentId: string;
  userId: string;
  turns: number;
  tokens: number;
  /** tokens ÷ the token threshold: how many extraction windows wait. */
  windows: number;
  oldestAgeMs: number;
}

/** A tenant's (or the process's) backlog. */
export interface BacklogView {
  /** Users with anything unextracted. */
  users: number;
  /** Users with more than one window waiting (the lane is behind for them). */
  usersBehind: number;
  turns: number;
  tokens: number;
  /** Age of the oldest unextracted turn, 0 when none. */
  oldestAgeMs: number;
  /** The largest per-user backlog in windows. */
  maxWindows: number;
  /** Users with the most tokens waiting (at most `top`). */
  byUser: UserBacklogView[];
}

/** A user crossing a backlog level: `behind` at `alertWindows`, `caught-up` when back to at most one window. */
export interface BacklogCrossing {
  scope: Scope;
  state: 'behind' | 'caught-up';
  view: UserBacklogView;
}

/**
 * The extraction backlog this process can see: turns it acked that no committed run has
 * read yet, per user. Appends add (O(1) on the ack path); a run's `readThroughSeq` (from
 * `extraction.finished`, whichever process ran it) drops what it read. It knows only this
 * process's appends since it started: turns buffered before a restart, or acked by another
 * gateway of a cluster, are not counted here.
 */
export class ExtractionBacklog {
  private readonly users = new Map<string, UserBacklog>();

  constructor(
    private readonly threshold: number,
    private readonly alertWindows: number,
    private readonly onCrossing: (c: BacklogCrossing) => void,
  ) {}

  /** An acked (not duplicate) turn. */
  add(scope: Scope, seq: number, tokens: number, receivedAt: number): void {
    const key = jobKey(scope);
    let u = this.users.get(key);
    if (!u) this.users.set(key, (u = { scope, seqs: [], tokens: [], receivedAt: [], head: 0, tokenSum: 0, behind: false }));
    u.seqs.push(seq);
    u.tokens.push(tokens);
    u.receivedAt.push(receivedAt);
    u.tokenSum += tokens;
    if (!u.behind && u.tokenSum >= this.alertWindows * this.threshold) {
      u.behind = true;
      this.onCrossing({ scope: u.scope, state: 'behind', view: this.view(u, receivedAt) });
    }
  }

  /** A committed run read every buffered turn of the user up to `seq`. */
  readThrough(scope: Scope, seq: number, now: number): void {
    const key = jobKey(scope);
    const u = this.users.get(key);
    if (!u) return;
    while (u.head < u.seqs.length && u.seqs[u.head]! <= seq) u.tokenSum -= u.tokens[u.head++]!;
    if (u.head === u.seqs.length) this.users.delete(key);
    else if (u.head > 1024 && u.head * 2 > u.seqs.length) {
      u.seqs.splice(0, u.head);
      u.tokens.splice(0, u.head);
      u.receivedAt.splice(0, u.head);
      u.head = 0;
    }
    if (u.behind && u.tokenSum <= this.threshold) {
      u.behind = false;
      this.onCrossing({ scope: u.scope, state: 'caught-up', view: this.view(u, now) });
    }
  }

  /** The user's turns are gone (forgotten). */
  drop(scope: Scope): void {
    this.users.delete(jobKey(scope));
  }

  /** The backlog of one tenant, or of every tenant when `tenantId` is undefined. */
  snapshot(now: number, tenantId?: string, top = 20): BacklogView {
    const out: BacklogView = { users: 0, usersBehind: 0, turns: 0, tokens: 0, oldestAgeMs: 0, maxWindows: 0, byUser: [] };
    const views: UserBacklogView[] = [];
    for (const u of this.users.values()) {
      if (tenantId !== undefined && u.scope.tenantId !== tenantId) continue;
      const v = this.view(u, now);
      out.users++;
      if (v.windows > 1) out.usersBehind++;
      out.turns += v.turns;
      out.tokens += v.tokens;
      out.oldestAgeMs = Math.max(out.oldestAgeMs, v.oldestAgeMs);
      out.maxWindows = Math.max(out.maxWindows, v.windows);
      views.push(v);
    }
    out.byUser = views.sort((a, b) => b.tokens - a.tokens).slice(0, top);
    return out;
  }

  private view(u: UserBacklog, now: number): UserBacklogView {
    const turns = u.seqs.length - u.head;
    return {
      agentId: u.scope.agentId,
      userId: u.scope.userId,
      turns,
      tokens: u.tokenSum,
      windows: Math.round((u.tokenSum / this.threshold) * 100) / 100,
      oldestAgeMs: turns > 0 ? Math.max(0, now - u.receivedAt[u.head]!) : 0,
    };
  }
}
