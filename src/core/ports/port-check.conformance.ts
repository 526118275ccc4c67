// The port check port's conformance suite (port-check.ts): a check either says why it makes no
// connection, or answers true for a port that accepts, false for one that refuses, and knows the
// host's own addresses. Run by Node's TCP check and the switched-off check
// (src/runtime/node/ports/conformance.test.ts) and by Workers' (test/workers/ports.test.ts).
import { describe, expect, it } from 'vitest';
import type { ParsedAddress } from '../net/address.js';
import type { PortCheck } from './port-check.js';

interface PortCheckUnderTest {
  check: PortCheck;
  /** For a check that connects: an address and a port that accepts, one that refuses, an address of the host's and one that is not. */
  peers?: { open: { address: ParsedAddress; port: number }; closed: { address: ParsedAddress; port: number }; own: ParsedAddress; notOwn: ParsedAddress };
}

export function portCheckConformance(name: string, make: () => Promise<PortCheckUnderTest> | PortCheckUnderTest): void {
  describe(`${name} port check conformance`, () => {
    it('says why it makes no connection, or connects: never neither', async () => {
      const { check, peers } = await make();
      if ('unavailable' in check) {
        // The words a caller reads in the 404: a sentence, not a code.
        expect(check.unavailable).toMatch(/^[A-Z].{20,}\.$/);
        return;
      }
      if (peers === undefined) throw new Error('a check that connects needs peers to be held to');
      expect(await check.reach(peers.open.address, peers.open.port)).toBe(true);
      expect(await check.reach(peers.closed.address, peers.closed.port)).toBe(false);
      expect(check.isOwnAddress(peers.own)).toBe(true);
      expect(check.isOwnAddress(peers.notOwn)).toBe(false);
    });
  });
}
