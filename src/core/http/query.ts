import { Problem } from './problems.js';

/** Decodes one form-urlencoded component (WHATWG URL §5.1: `+` is a space). */
function decodeComponent(text: string): string {
  if (!text.includes('%') && !text.includes('+')) return text;
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    throw new Problem('invalid_parameter', 'The query string holds a malformed percent-encoding.');
  }
}

/**
 * The named parameters of a raw query string, each at most once; other parameters are ignored. A
 * repeated parameter or a malformed encoding is refused where it stands (`invalid_parameter`); a
 * missing one is left out, for the route to report or default.
 */
export function queryParameters<K extends string>(query: string, keys: readonly K[]): Partial<Record<K, string>> {
  // No prototype: a key named __proto__ or toString is a key like any other (found by fuzzing).
  const found = Object.create(null) as Partial<Record<K, string>>;
  for (let from = 0; from < query.length; ) {
    let to = query.indexOf('&', from);
    if (to === -1) to = query.length;
    const pair = query.slice(from, to);
    from = to + 1;
    const eq = pair.indexOf('=');
    const key = decodeComponent(eq === -1 ? pair : pair.slice(0, eq));
    if (!(keys as readonly string[]).includes(key)) continue;
    if (Object.hasOwn(found, key)) throw new Problem('invalid_parameter', `The query parameter "${key}" must be given once.`);
    found[key as K] = eq === -1 ? '' : decodeComponent(pair.slice(eq + 1));
  }
  return found;
}
