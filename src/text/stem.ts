/**
 * A light English suffix stripper (plural -s/-es/-ies, -ing, -ed, final -e, -y → -i), so that
 * "applied", "applies" and "apply", or "moved", "moving" and "move", compare equal. Deliberately
 * cruder than Porter: it only has to make inflections of one word collide, and it is shared by
 * enum matching, the offline extractor's cue matching and the offline embedder.
 */
export function stem(word: string): string {
  let s = word.toLowerCase();
  if (s.endsWith("'s")) s = s.slice(0, -2);
  if (s.length <= 3) return s;
  if (s.endsWith('ies') && s.length > 4) s = `${s.slice(0, -3)}y`;
  else if (s.endsWith('sses') || /(ch|sh|x|zz)es$/.test(s)) s = s.slice(0, -2);
  else if (s.endsWith('s') && !/(ss|us|is)$/.test(s)) s = s.slice(0, -1);
  if (s.endsWith('ing') && s.length > 5) s = undouble(s.slice(0, -3));
  else if (s.endsWith('ied') && s.length > 4) s = `${s.slice(0, -3)}y`;
  else if (s.endsWith('ed') && s.length > 4) s = undouble(s.slice(0, -2));
  if (s.endsWith('e') && s.length > 3) s = s.slice(0, -1);
  if (s.endsWith('y') && s.length > 3) s = `${s.slice(0, -1)}i`;
  return s;
}

// "planned" → "plan", "running" → "run"; but "called" stays "call" and "missed" "miss".
function undouble(s: string): string {
  return /([b-df-hj-km-np-rtv-z])\1$/.test(s) && !/(ll|ss|zz)$/.test(s) ? s.slice(0, -1) : s;
}
