import type { FactValue, Turn } from '../../core/types.ts';
import type { AcuDraft, CompressionInput, ExtractedFact, ExtractionInput, Extractor } from '../../ports/extractor.ts';
import { findMoney } from '../../text/money.ts';
import { adjacent, isConfirmation, isQuestion, normalizeSpeech, splitSentences } from './clauses.ts';
import { compressSegment } from './compressor.ts';
import { applySelfCorrections } from './corrections.ts';
import { compileSchema, findCues, type CompiledField } from './field-cues.ts';
import { QualifierTracker } from './qualifiers.ts';
import { readTurn, type TurnFact } from './turn-extractor.ts';
import { CONFIG_DEFAULTS } from '../../config/config-schema.ts';

/** Options of the offline extractor. */
export interface OfflineExtractorOptions {
  /** A user turn recognised with less confidence than this yields only `inferred` facts (config `memory.lowAsrConfidence`). */
  lowAsrConfidence?: number;
}

// A reply that opens by denying what the agent just said.
const DENIAL_RE = /^\W*(?:no|nope|nah|not quite|not really|wrong|that's wrong|that's not right|incorrect)\b/i;
const ASKS_NAME = /\b(your (?:full )?name|who (?:am i|is this)|speaking with|talking to|whom? do i have)\b/i;
// A free-text answer only answers a question that asks for a thing ("Which area?"), not "How are you feeling?".
const ASKS_FOR_TEXT = /^(?:\W*(?:and|so|okay|ok|great|also|now)\b[\s,]*)*(?:what|which|where|who|whom|may i (?:have|know|get)|can i (?:have|get)|could you (?:tell|give)|tell me)\b/i;

/**
 * The offline, rule-based language-model adapter: schema-driven extraction from cue phrases,
 * value patterns and question–answer pairs, and ACU compression by pronoun and date rewriting.
 * Deterministic and network-free; it is the embedded default, an LLM adapter does better on
 * free-form speech (see the README of this folder for what it catches and what it misses).
 */
export class OfflineExtractor implements Extractor {
  readonly id = 'offline';
  private readonly lowAsr: number;

  constructor(options: OfflineExtractorOptions = {}) {
    this.lowAsr = options.lowAsrConfidence ?? CONFIG_DEFAULTS.memory.lowAsrConfidence;
  }

  async extract(input: ExtractionInput): Promise<ExtractedFact[]> {
    const fields = compileSchema(input.schema);
    const turns = [...input.turns].filter((t) => t.role === 'user' || t.role === 'agent').sort((a, b) => a.ts - b.ts || a.seq - b.seq);
    const read = turns.map((t) => applySelfCorrections(normalizeSpeech(t.text)));
    const texts = read.map((r) => r.text);
    const tracker = new QualifierTracker(input.schema, input.knownProfile);
    const keyBys = [...new Set(input.schema.fields.flatMap((f) => (f.keyBy ? [f.keyBy] : [])))];
    const out: ExtractedFact[] = [];
    let currency: string | undefined;
    turns.forEach((turn, i) => {
      const text = texts[i]!;
      const stated = findMoney(text)
        .filter((m) => m.currencyStated)
        .at(-1)?.money.currency;
      if (turn.role === 'agent') {
        // The agent naming the property under discussion still sets the conversation's topic.
        const mentioned = readTurn({ fields, text, ts: turn.ts, perspective: 'agent', askedFields: new Set(), lowAsr: false });
        tracker.observe(keyBys, text, valuesOf(mentioned));
        currency = stated ?? currency;
        return;
      }
      const before = turns[i - 1];
      const prev = before?.role === 'agent' && adjacent(before, turn, input.turns) ? before : null;
      const asked = prev ? askedFields(fields, texts[i - 1]!) : new Set<string>();
      const lowAsr = turn.asrConfidence !== undefined && turn.asrConfidence < this.lowAsr;
      currency = stated ?? currency;
      let own = latestPerField(readTurn({ fields, text, ts: turn.ts, perspective: 'user', askedFields: asked, lowAsr, corrections: read[i]!.spans, ...(currency ? { currency } : {}) }));
      // "No, 85 lakhs" to the agent's "So your budget is 90 lakhs?": the caller corrects what the agent holds.
      if (prev && DENIAL_RE.test(turn.text)) {
        const readBack = readBackFields(fields, texts[i - 1]!, prev.ts, asked);
        own = own.map((f) => (readBack.has(f.field.name) ? { ...f, correction: true } : f));
      }
      let confirmed: TurnFact[] = [];
      if (prev && isConfirmation(turn.text)) {
        confirmed = latestPerField(readTurn({ fields, text: texts[i - 1]!, ts: prev.ts, perspective: 'agent', askedFields: new Set(), lowAsr: false, ...(currency ? { currency } : {}) }));
        // "Yes, but make it 90 lakhs": what the caller says beats what was read back to them,
        // unless it is a shorter form of it ("Yes, this is Meera" to "Am I speaking with Meera Shah?").
        const fuller = (c: TurnFact, o: TurnFact) =>
          typeof c.value === 'string' && typeof o.value === 'string' && c.value.length > o.value.length && c.value.toLowerCase().includes(o.value.toLowerCase());
        own = own.filter((o) => !confirmed.some((c) => c.field.name === o.field.name && fuller(c, o)));
        confirmed = confirmed.filter((c) => !own.some((o) => o.field.name === c.field.name));
        // A "yes" the recogniser was unsure of confirms nothing for certain.
        if (lowAsr) confirmed = confirmed.map((c) => ({ ...c, source: 'inferred' }));
      }
      const sameTurn = valuesOf([...confirmed, ...own]);
      for (const f of confirmed) out.push(this.toFact(f, [prev!, turn], tracker, text, sameTurn));
      for (const f of own) {
        out.push(this.toFact(f, f.viaQuestion && prev ? [prev, turn] : [turn], tracker, text, sameTurn));
      }
      tracker.observe(keyBys, text, sameTurn);
    });
    return out;
  }

  async compress(input: CompressionInput): Promise<AcuDraft[]> {
    return compressSegment(input);
  }

  private toFact(f: TurnFact, evidence: Turn[], tracker: QualifierTracker, text: string, sameTurn: ReadonlyMap<string, FactValue>): ExtractedFact {
    const fact: ExtractedFact = { field: f.field.name, value: f.value, source: f.source, evidence: evidence.map((t) => t.turnId) };
    // Its own part of the clause, else its clause, else the turn and the conversation.
    const qualifier = f.scope !== undefined ? tracker.resolve(f.field, f.scope, sameTurn, true) : (tracker.named(f.field, f.clause) ?? tracker.resolve(f.field, text, sameTurn));
    if (qualifier !== undefined) fact.qualifier = qualifier;
    if (f.validFrom !== undefined) fact.validFrom = f.validFrom;
    if (f.correction) fact.correction = true;
    if (f.ended) fact.ended = true;
    return fact;
  }
}

/**
 * Fields the agent's question(s) in a turn ask about: a strong cue inside a question sentence,
 * or an amount read back ("So that's 90 lakhs?") when the schema has a single money field.
 */
function askedFields(fields: readonly CompiledField[], agentText: string): Set<string> {
  const questions = splitSentences(agentText).filter(isQuestion);
  const out = new Set<string>();
  const money = fields.filter((cf) => cf.field.type === 'money');
  for (const q of questions) {
    if (money.length === 1 && findMoney(q).some((m) => m.marked)) out.add(money[0]!.field.name);
    for (const cf of fields) {
      if (cf.field.type === 'string' && cf.kind !== 'self-name' && !ASKS_FOR_TEXT.test(q)) continue;
      if (cf.kind === 'self-name' ? ASKS_NAME.test(q) : findCues(cf, q).some((h) => h.strength === 'strong' && !h.proper)) out.add(cf.field.name);
    }
  }
  return out;
}

/**
 * Fields the agent's turn states a value for, as a read-back or a proposal ("So your budget is
 * 90 lakhs?"): a strong cue with a value, or an amount read back to a money question.
 */
function readBackFields(fields: readonly CompiledField[], agentText: string, ts: number, asked: ReadonlySet<string>): Set<string> {
  // "Do you have pets?" or "Have you applied?" asks; it holds no value a "No" could correct.
  const asks = splitSentences(agentText).some(isQuestion);
  const stated = readTurn({ fields, text: agentText, ts, perspective: 'agent', askedFields: new Set(), lowAsr: false });
  const out = new Set(stated.filter((f) => !asks || (f.field.type !== 'boolean' && f.field.type !== 'enum')).map((f) => f.field.name));
  const amount = findMoney(agentText).some((m) => m.marked);
  for (const name of asked) if (amount && fields.some((cf) => cf.field.name === name && cf.field.type === 'money')) out.add(name);
  return out;
}

/**
 * One fact per field (per qualifier named in its own part of a clause) in a turn: a present
 * mention beats a former one, then the later mention wins.
 */
function latestPerField(facts: readonly TurnFact[]): TurnFact[] {
  const best = new Map<string, TurnFact>();
  for (const f of facts) {
    const key = f.scope === undefined ? f.field.name : `${f.field.name}\u0000${f.scope}`;
    const cur = best.get(key);
    if (!cur || (cur.former && !f.former) || (cur.former === f.former && f.order > cur.order)) best.set(key, f);
  }
  return [...best.values()].sort((a, b) => a.order - b.order);
}

function valuesOf(facts: readonly TurnFact[]): Map<string, FactValue> {
  return new Map(facts.map((f) => [f.field.name, f.value]));
}
