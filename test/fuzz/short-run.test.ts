// The fuzz targets (fuzz/targets/, docs/fuzzing.md) in the normal suite: each replays its seed
// corpus, then runs a bounded number of generated and mutated inputs from a fixed seed, and fails
// on any invariant broken. Findings already reported (fuzz/known-findings.ts) are counted, not
// failed on, until their fix lands; test/fuzz/regressions.test.ts holds their inputs. The long,
// coverage-guided run is `npm run fuzz:long`.
import { describe, expect, it } from 'vitest';
import { runCampaign } from '../../fuzz/campaign.js';
import { readCorpus } from '../../fuzz/corpus.js';
import { KNOWN_FINDINGS } from '../../fuzz/known-findings.js';
import { TARGET_NAMES, TARGETS, type TargetName } from '../../fuzz/registry.js';

/** Inputs per target, sized so that each takes a second or two here (their speeds differ tenfold). */
const RUNS: Record<TargetName, number> = {
  dns: 8_000,
  'proxy-protocol': 15_000,
  forwarded: 10_000,
  address: 15_000,
  query: 15_000,
  accept: 8_000,
  share: 15_000,
  history: 8_000,
  'reverse-zone': 15_000,
  'rpm-config': 10_000,
};

/** The regression inputs of findings still open: run by regressions.test.ts, not mutated here. */
const OPEN_INPUTS = new Set(KNOWN_FINDINGS.flatMap((f) => f.inputs));

/** Issue 50, where the fuzzing was asked for: the same inputs on every run. */
const SEED = 50;

describe('fuzz targets, short run', () => {
  for (const [i, name] of TARGET_NAMES.entries()) {
    it(`${name}: the seed corpus and ${RUNS[name].toLocaleString('en')} generated inputs keep every invariant`, () => {
      const corpus = readCorpus(name)
        .filter((entry) => !OPEN_INPUTS.has(`${name}/${entry.name}`))
        .map((entry) => entry.bytes);
      expect(corpus.length).toBeGreaterThan(0);
      const report = runCampaign({ target: TARGETS[name], seed: SEED + i, runs: RUNS[name], corpus, tolerateKnown: true });
      if (report.failure !== undefined) {
        const input = Buffer.from(report.failure.input);
        throw new Error(
          `${name} broke an invariant (seed ${String(report.failure.seed)}, path ${String(report.failure.path)}) on ${JSON.stringify(input.toString('latin1'))} (hex ${input.toString('hex')}); replay: npm run fuzz:long -- ${name} --replay <file>`,
          { cause: report.failure.error },
        );
      }
      expect(report.executions).toBeGreaterThanOrEqual(corpus.length + RUNS[name]);
    });
  }
});
