/**
 * Users with realistic memory for the session-start bench, written straight
 * into a SQLite file before the server opens it: a profile, 50 active facts
 * (plus their superseded history), 20 kept recent turns and 3 session
 * summaries each — what a caller has after a dozen calls.
 */
import { openSqlite, SqliteDocumentStore } from '../../src/adapters/sqlite/index.ts';
import { iso } from '../../src/core/clock.ts';
import { estimateTokens } from '../../src/core/tokens.ts';
import type { HotDocument, ProfileEntry, Scope, TemporalEntity, Turn } from '../../src/core/types.ts';
import { syntheticTurn } from './turn-text.ts';

const FACT_FIELDS = ['budget', 'location', 'preferred_area', 'property_type', 'bedrooms', 'loan_status', 'move_in_date', 'parking', 'floor_preference', 'school_need'];

/** Shape of each seeded user's memory. */
export interface SeedShape {
  facts: number;
  supersededPerFact: number;
  recentTurns: number;
  summaries: number;
}

/** The default shape: 50 facts, 20 recent turns (the "realistic memory"). */
export const REALISTIC: SeedShape = { facts: 50, supersededPerFact: 0.2, recentTurns: 20, summaries: 3 };

/** One user's hot document. */
export function seededDocument(scope: Scope, userIndex: number, shape: SeedShape, now: number): HotDocument {
  const day = 86_400_000;
  const entities: TemporalEntity[] = [];
  for (let i = 0; i < shape.facts; i++) {
    const field = FACT_FIELDS[i % FACT_FIELDS.length]!;
    const key = `${field}:${Math.floor(i / FACT_FIELDS.length)}`;
    const validFrom = iso(now - (shape.facts - i) * day);
    const base = {
      key,
      field,
      category: 'temporal' as const,
      source: i % 7 === 0 ? ('inferred' as const) : ('explicit' as const),
      recordedAt: validFrom,
      expiresAt: null,
      evidence: [`seed-${userIndex}-t${i}`],
    };
    const id = `ent-${userIndex}-${i}`;
    if (i < shape.facts * shape.supersededPerFact) {
      const oldId = `${id}-old`;
      entities.push({
        ...base,
        id: oldId,
        value: `earlier ${field} value ${i}`,
        status: 'superseded',
        validFrom: iso(now - (shape.facts + 30 - i) * day),
        validUntil: validFrom,
        supersedes: null,
        supersededBy: id,
      });
      entities.push({ ...base, id, value: `${field.replace(/_/g, ' ')} detail ${i} for caller ${userIndex}`, status: 'active', validFrom, validUntil: null, supersedes: oldId, supersededBy: null });
    } else {
      entities.push({ ...base, id, value: `${field.replace(/_/g, ' ')} detail ${i} for caller ${userIndex}`, status: 'active', validFrom, validUntil: null, supersedes: null, supersededBy: null });
    }
  }
  const profileEntry = (value: string): ProfileEntry => ({ value, updatedAt: iso(now - 40 * day), source: 'explicit', evidence: [`seed-${userIndex}-p`] });
  const recent: Turn[] = Array.from({ length: shape.recentTurns }, (_, i) => {
    const t = syntheticTurn(userIndex, i);
    const ts = now - day + i * 20_000;
    return { turnId: `seed-${userIndex}-r${i}`, seq: i + 1, sessionId: `seed-s-${userIndex}`, role: t.role, text: t.text, ts, receivedAt: ts, tokens: estimateTokens(t.text), speaker: t.speaker };
  });
  return {
    scope,
    profile: { full_name: profileEntry(syntheticTurn(userIndex, 0).speaker), email: profileEntry(`caller${userIndex}@example.com`), occupation: profileEntry('software engineer') },
    entities,
    recent,
    summaries: Array.from({ length: shape.summaries }, (_, i) => ({
      sessionId: `seed-s-${userIndex}-${i}`,
      text: `Call ${i + 1}: discussed budget, preferred areas and a site visit; the caller asked for a callback and confirmed the loan status.`,
      from: iso(now - (10 - i) * day),
      to: iso(now - (10 - i) * day + 600_000),
    })),
    counters: { extractions: 12, turnsArchived: 300, acusIndexed: 240, acusSuppressed: 12 },
    version: 1,
    updatedAt: iso(now),
  };
}

/** Write `users` seeded users (user ids `${prefix}${i}`) into the SQLite file at `path`. */
export async function seedUsers(path: string, tenantId: string, agentId: string, prefix: string, users: number, shape: SeedShape = REALISTIC): Promise<void> {
  const db = openSqlite(path);
  try {
    const docs = new SqliteDocumentStore(db);
    const now = Date.now();
    for (let i = 0; i < users; i++) {
      const scope = { tenantId, agentId, userId: `${prefix}${i}` };
      if (!(await docs.commitHot(seededDocument(scope, i, shape, now), 0))) throw new Error(`seed conflict for ${scope.userId}`);
    }
  } finally {
    db.close();
  }
}
