// Fuzz target: the raw query string of a request (queryParameters, src/core/http/query.ts). Its
// contract: the named parameters, each at most once, form-urlencoded (WHATWG URL §5.1); other
// parameters are ignored; a repeated named one or a malformed percent-encoding is refused with
// the `invalid_parameter` problem (a 400); nothing else is thrown.
import { Problem } from '../../src/core/http/problems.js';
import { queryParameters } from '../../src/core/http/query.js';
import { check, json, outcome } from '../invariant.js';

/** The parameters the routes ask for (dns/route.ts: name and type; ip/text-routes.ts: ip). */
const KEYS = ['name', 'type', 'ip'] as const;

type Read = { ok: true; value: Partial<Record<(typeof KEYS)[number], string>> } | { ok: false; error: unknown };

const read = (query: string): Read =>
  outcome('query/only-invalid-parameter', () => queryParameters(query, KEYS), (err) => err instanceof Problem && err.code === 'invalid_parameter');

/** Two readings agree: the same parameters, or both refused. */
const same = (a: Read, b: Read): boolean => a.ok === b.ok && (!a.ok || json(a.value) === json((b as { value: unknown }).value));

export function fuzz(data: Buffer): void {
  // Node hands the request target over as latin1 text (one character per byte).
  const query = data.toString('latin1');
  const first = read(query);

  // Other parameters are ignored: one more before the rest changes nothing.
  const prefixed = read(`other=1&${query}`);
  check(same(prefixed, first), 'query/others-ignored', () => `${JSON.stringify(query)}: ${json(first)} but ${json(prefixed)} with other=1& before it`);
  if (!first.ok) return;

  const found = first.value;
  check(
    Object.entries(found).every(([key, value]) => (KEYS as readonly string[]).includes(key) && typeof value === 'string'),
    'query/only-named-keys',
    () => `${JSON.stringify(query)} gave ${json(found)}`,
  );
  for (const key of KEYS) {
    const value = found[key];
    const added = read(`${query}&${key}=x`);
    if (value === undefined) {
      // A parameter not given is absent; given once after the rest, it reads as given.
      check(added.ok && added.value[key] === 'x', 'query/each-once', () => `${JSON.stringify(query)} + &${key}=x gave ${json(added)}`);
    } else {
      // Given twice is refused where it stands.
      check(!added.ok, 'query/each-once', () => `${JSON.stringify(query)} + &${key}=x was taken: ${json(added)}`);
      // The value is what a client encoding it would have meant (encodeURIComponent, decoded back).
      const encoded = read(`${key}=${encodeURIComponent(value)}`);
      check(encoded.ok && encoded.value[key] === value, 'query/decodes-what-was-encoded', () => `${JSON.stringify(value)} encoded reads as ${json(encoded)}`);
    }
  }
}
