/**
 * Scenarios the offline extractor still gets wrong, with the reason. The test
 * asserts they still fail, so a fix is noticed (and the entry removed) instead
 * of passing silently.
 */
export const KNOWN_GAPS: Record<string, string> = {};
