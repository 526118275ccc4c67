// The OpenAPI document's schema for /v1/dns/resolve's `name` says in JSON Schema what the server
// checks (issue 37: contract tools generate input from it): checked here with the validator Ajv
// compiled from the document (scripts/generate.mjs), against the server's own checks.
import { describe, expect, it } from 'vitest';
import { canonicalName, reverseName } from '../../src/engines/dns/names.js';
import { parameterAllows } from '../support/contract.js';

const schemaAllows = (name: string) => parameterAllows('GET', '/v1/dns/resolve', 'name', name);
const passes = (check: (name: string) => string) => (name: string) => {
  try {
    check(name);
    return true;
  } catch {
    return false;
  }
};
/** The server takes the name for some type: as a DNS name, or as a PTR's address. */
const serverAllows = (name: string) => passes(canonicalName)(name) || passes(reverseName)(name);

describe("the OpenAPI schema of /v1/dns/resolve's name", () => {
  it('rejects a label of 64 characters and allows one of 63, as the server does', () => {
    const label63 = 'a'.repeat(63);
    const label64 = 'a'.repeat(64);
    for (const name of [label64, `${label64}.example`, `www.${label64}.example.`]) {
      expect(schemaAllows(name), name).toBe(false);
      expect(serverAllows(name), name).toBe(false);
    }
    for (const name of [label63, `${label63}.example`, `www.${label63}.example.`]) {
      expect(schemaAllows(name), name).toBe(true);
      expect(serverAllows(name), name).toBe(true);
    }
  });

  it.each([
    ['www.example.test', true],
    ['Example.TEST.', true],
    ['_dmarc.example.test', true],
    ['xn--bcher-kva.example', true],
    ['bücher.example', true],
    ['192.0.2.1', true],
    ['2001:db8::1', true],
    ['::ffff:192.0.2.1', true],
    ['a..b', false],
    ['.example', false],
    ['.', false],
    ['a b.example', false],
    ['a/b.example', false],
    ['user@example.test', false],
    ['bü cher.example', false],
    ['fe80::1%eth0', false],
  ])('%s: %s', (name, allowed) => {
    expect(schemaAllows(name)).toBe(allowed);
    expect(serverAllows(name)).toBe(allowed);
  });

  it('agrees with the server on 5000 ASCII strings of name-like characters (a fixed seed)', () => {
    // A small linear congruential generator: the same strings on every run.
    let seed = 37;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const alphabet = 'ab1_-.:.Z9';
    const disagreements: string[] = [];
    for (let i = 0; i < 5000; i++) {
      const length = 1 + next(3) * 30 + next(40);
      let name = '';
      for (let j = 0; j < length; j++) name += alphabet[next(alphabet.length)] ?? 'a';
      // The schema allows IPv6 by its characters only; the server parses it. Compare the rest.
      if (name.includes(':')) {
        if (serverAllows(name)) expect(schemaAllows(name), name).toBe(true);
        continue;
      }
      if (schemaAllows(name) !== serverAllows(name)) disagreements.push(name);
    }
    expect(disagreements).toEqual([]);
  });
});
