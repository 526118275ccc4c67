/**
 * RFC 3339 UTC timestamps with a `Z` suffix (docs/api.md). Under load many requests share a
 * millisecond, so the last one formatted is reused.
 */
let lastMs = -1;
let lastText = '';

export function isoTimestamp(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastText = new Date(ms).toISOString();
  }
  return lastText;
}
