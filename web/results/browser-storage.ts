// The browser's own storage as the page's history uses it: the part of the Web Storage API it
// needs (localStorage in the page, a Map in tests) and one way to read a stored JSON value.

/** The part of the Web Storage API this needs (localStorage in the page, a Map in tests). */
export interface HistoryStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/**
 * What is stored under `key`, parsed: nothing (null), its JSON, or why it cannot be read
 * (`notJson` names it when it is not JSON). Shared by the results and the watch summaries.
 */
export function readStored(storage: HistoryStorage, key: string, notJson: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  let raw: string | null;
  try {
    raw = storage.getItem(key);
  } catch (err) {
    return { ok: false, reason: `this browser refused its storage (${err instanceof Error ? err.message : String(err)})` };
  }
  if (raw === null) return { ok: true, value: null };
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch {
    return { ok: false, reason: notJson };
  }
}
