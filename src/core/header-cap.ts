// How much of a list-valued header the service reads. Node takes up to 16 KiB of
// headers, and parsing a 15 KB Accept-Encoding cost ten times a whole static answer; the lists
// that matter are short (a browser's Accept is under 200 bytes), so only a bounded part is parsed,
// cut at an element boundary (RFC 9110 §5.6.1: elements are comma-separated).

/** The most of a list header that is parsed. */
export const MAX_LIST_HEADER = 1024;

/** The list's first elements within `max` characters: the preferences a client states first. */
export function listHead(value: string, max = MAX_LIST_HEADER): string {
  if (value.length <= max) return value;
  const cut = value.lastIndexOf(',', max);
  return cut === -1 ? '' : value.slice(0, cut);
}

/**
 * The list's last elements within `max` characters, and whether any were left out: a forwarding
 * header is read right to left (its nearest hops last), so its tail is what decides.
 */
export function listTail(value: string, max = MAX_LIST_HEADER): { tail: string; cut: boolean } {
  if (value.length <= max) return { tail: value, cut: false };
  const start = value.indexOf(',', value.length - max - 1);
  return { tail: start === -1 ? '' : value.slice(start + 1), cut: true };
}
