// The probe client port's conformance suite (probe-client.ts): the regions it names are the
// contract's, a region without a probe or with one that does not answer is ProbeUnavailable, one
// that answers is measured. Run by Node's client against `netdiag probe` processes and the
// no-probes deployment (test/latency/probes.test.ts) and by Workers' client (test/workers/ports.test.ts).
import { describe, expect, it } from 'vitest';
import { REGION_IDS, type RegionId } from '../../common/regions.js';
import { ProbeUnavailable, type LatencyProbes } from './probe-client.js';

interface ProbesUnderTest {
  probes: LatencyProbes;
  /** A configured region whose probe answers, where the test has one. */
  answering?: RegionId;
  /** A configured region whose probe is down, where the test has one. */
  down?: RegionId;
}

/** A probe that does not answer is given up well within the route's own deadline. */
const GIVE_UP_MS = 10_000;

export function probeClientConformance(name: string, make: () => Promise<ProbesUnderTest> | ProbesUnderTest): void {
  describe(`${name} probe client conformance`, () => {
    it('names only the contract\'s regions', async () => {
      const { probes } = await make();
      expect([...probes.regions].filter((r) => !REGION_IDS.includes(r))).toEqual([]);
    });

    it('a region without a probe is ProbeUnavailable, at once', async () => {
      const { probes } = await make();
      const missing = REGION_IDS.find((r) => !probes.regions.has(r));
      if (missing === undefined) throw new Error('every region has a probe: the case needs one without');
      const started = performance.now();
      await expect(probes.measure(missing)).rejects.toBeInstanceOf(ProbeUnavailable);
      expect(performance.now() - started).toBeLessThan(1_000);
    });

    it('a probe that answers is measured in milliseconds; one that is down is ProbeUnavailable', async () => {
      const { probes, answering, down } = await make();
      if (answering !== undefined) {
        const ms = await probes.measure(answering);
        expect(Number.isFinite(ms)).toBe(true);
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThan(GIVE_UP_MS);
      }
      if (down !== undefined) {
        const started = performance.now();
        await expect(probes.measure(down)).rejects.toBeInstanceOf(ProbeUnavailable);
        expect(performance.now() - started).toBeLessThan(GIVE_UP_MS);
      }
    }, 30_000);
  });
}
