import type { Role } from './types.ts';

// A display name that already carries its role ("Meera (agent)", as some telephony legs label
// their parties): the role is said once, by whoever renders the name, not twice.
const ROLE_SUFFIX = /\s*\((?:user|agent|system|tool)\)\s*$/i;

/** The speaker's display name without a trailing role, or undefined when it names no one. */
export function speakerName(speaker: string | null | undefined): string | undefined {
  if (typeof speaker !== 'string') return undefined;
  const name = speaker.replace(ROLE_SUFFIX, '').replace(/\s+/g, ' ').trim();
  return name === '' ? undefined : name;
}

/** "Rajiv Kumar (user)", or the bare role when the turn names no speaker. */
export function speakerLabel(t: { role: Role; speaker?: string | null | undefined }): string {
  const name = speakerName(t.speaker);
  return name === undefined ? t.role : `${name} (${t.role})`;
}
