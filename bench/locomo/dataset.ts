/**
 * Reading LoCoMo (snap-research/locomo, CC BY-NC 4.0) at run time from
 * ../shared/data/locomo: the data is never copied into this repository.
 * Sessions are found by their `session_N` keys (conv-26 has date keys for
 * sessions that do not exist), dates like "1:56 pm on 8 May, 2023" are read as
 * UTC, and evidence ids are pulled out with a pattern so the known malformed
 * entries ("D8:6; D9:17") still yield their ids and "D" yields none.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** One dialog turn as stored in the file. */
export interface LocomoRawTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
  img_url?: string[];
}

/** One question. `answer` is absent for most category-5 items and an integer for a few. */
export interface LocomoQa {
  question: string;
  answer?: string | number;
  evidence: string[];
  category: number;
}

/** One conversation (sample) of the file. */
export interface LocomoSample {
  sample_id: string;
  conversation: Record<string, unknown>;
  qa: LocomoQa[];
}

/** A turn ready to stream: the dia_id is the memgate turnId. */
export interface LocomoTurn {
  diaId: string;
  speaker: string;
  /** The text, plus "[shares a photo of …]" when the turn carries an image caption. */
  text: string;
  /** Epoch ms: the session's date plus `TURN_GAP_MS` per turn. */
  ts: number;
}

/** One session (one call) of a conversation. */
export interface LocomoSession {
  index: number;
  dateTime: string;
  startTs: number;
  turns: LocomoTurn[];
}

/** Seconds between consecutive turns of a session (the file has one date per session). */
export const TURN_GAP_MS = 20_000;

/** Categories scored for retrieval, with their names as LoCoMo's JSON numbers them. */
export const CATEGORY_NAMES: Readonly<Record<number, string>> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop', 5: 'adversarial' };

/** Where the dev split lives: `MEMGATE_LOCOMO_PATH`, else ../shared/data/locomo/locomo-dev.json beside the repo. */
export function locomoPath(repoRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  return env['MEMGATE_LOCOMO_PATH'] ?? resolve(repoRoot, '..', 'shared', 'data', 'locomo', 'locomo-dev.json');
}

/** Load the samples, or null when the file is absent (the suite then reports "not run"). */
export function loadLocomo(path: string): LocomoSample[] | null {
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, 'utf8')) as LocomoSample[];
}

const MONTHS: Record<string, number> = { january: 0, february: 1, march: 2, april: 3, may: 4, june: 5, july: 6, august: 7, september: 8, october: 9, november: 10, december: 11 };

/** Parse "1:56 pm on 8 May, 2023" as a UTC instant (epoch ms). */
export function parseLocomoDate(text: string): number {
  const m = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/i.exec(text);
  if (!m) throw new Error(`unrecognised LoCoMo date "${text}"`);
  const month = MONTHS[m[5]!.toLowerCase()];
  if (month === undefined) throw new Error(`unrecognised month in LoCoMo date "${text}"`);
  let hour = Number(m[1]) % 12;
  if (m[3]!.toLowerCase() === 'pm') hour += 12;
  return Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]));
}

/** The turn text memgate receives: image-only turns keep their caption as words. */
export function turnText(t: LocomoRawTurn): string {
  return t.blip_caption ? `${t.text} [shares a photo of ${t.blip_caption}]`.trim() : t.text;
}

/** The conversation's two speakers: speaker_a first. */
export function speakersOf(sample: LocomoSample): [string, string] {
  return [String(sample.conversation['speaker_a']), String(sample.conversation['speaker_b'])];
}

/** Sessions in order, each turn with its world time. */
export function sessionsOf(sample: LocomoSample): LocomoSession[] {
  const conv = sample.conversation;
  const indexes = Object.keys(conv)
    .map((k) => /^session_(\d+)$/.exec(k)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
  return indexes.map((index) => {
    const dateTime = String(conv[`session_${index}_date_time`]);
    const startTs = parseLocomoDate(dateTime);
    const raw = conv[`session_${index}`] as LocomoRawTurn[];
    return {
      index,
      dateTime,
      startTs,
      turns: raw.map((t, i) => ({ diaId: t.dia_id, speaker: t.speaker, text: turnText(t), ts: startTs + i * TURN_GAP_MS })),
    };
  });
}

/** Every dialog id named in a question's evidence (malformed entries split, "D" alone dropped). */
export function evidenceIds(qa: LocomoQa): string[] {
  const ids = new Set<string>();
  for (const e of qa.evidence ?? []) for (const m of String(e).matchAll(/D\d+:\d+/g)) ids.add(m[0]);
  return [...ids];
}
