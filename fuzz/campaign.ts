// One fuzzing campaign of one target: the corpus replayed, then inputs from fast-check (fresh ones
// from the target's generator, and mutations of the corpus), each run through the target until
// the budget (runs or seconds) is spent or an input breaks an invariant. With coverage, an input
// that runs a block no input ran before joins the in-memory corpus and is mutated in turn.
// fast-check drives the loop so that a failure shrinks to a small input and a seed replays it.
import fc from 'fast-check';
import type { Coverage } from './coverage.js';
import { knownFinding } from './known-findings.js';
import { mutated } from './mutate.js';
import type { Target } from './registry.js';

export interface CampaignOptions {
  target: Target;
  seed: number;
  /** At most this many generated inputs (the corpus replay aside). */
  runs?: number;
  /** At most this long, in seconds. */
  seconds?: number;
  /** The seeds; inputs that reach new coverage are added to it. */
  corpus: Uint8Array[];
  coverage?: Coverage;
  /**
   * Coverage is read after a batch of inputs, not each one: a take costs from 0.4 ms to several,
   * growing with the functions that ran (fast-check's among them). The batch starts at this size,
   * doubles each time it finds nothing new, up to MAX_BATCH, and starts again when it does.
   */
  batch?: number;
  /** Findings already reported (known-findings.ts) are counted, not stopped at. */
  tolerateKnown?: boolean;
}

export interface CampaignReport {
  executions: number;
  elapsedMs: number;
  /** Inputs kept for new coverage (the corpus has grown by this many). */
  kept: number;
  /** The input that broke an invariant, shrunk, and what it threw. */
  failure?: { input: Uint8Array; error: unknown; seed: number; path: string | null };
  /** Known findings met, by id: how often, and the first input. */
  known: Map<string, { count: number; input: Uint8Array }>;
  slowest: { ms: number; input: Uint8Array };
  /** Time spent inside the target, the rest going to generation, mutation and coverage. */
  targetMs: number;
}

const MAX_BATCH = 4096;

export function runCampaign(options: CampaignOptions): CampaignReport {
  const { target, corpus, coverage } = options;
  let batch = options.batch ?? 64;
  const started = performance.now();
  const report: CampaignReport = { executions: 0, elapsedMs: 0, kept: 0, known: new Map(), slowest: { ms: 0, input: new Uint8Array() }, targetMs: 0 };

  /** Runs one input; a known finding is noted and swallowed when tolerated, anything else thrown. */
  const execute = (input: Uint8Array) => {
    const at = performance.now();
    try {
      target.fuzz(Buffer.from(input.buffer, input.byteOffset, input.byteLength));
    } catch (err) {
      const id = options.tolerateKnown === true ? knownFinding(err) : undefined;
      if (id === undefined) throw err;
      const seen = report.known.get(id);
      if (seen === undefined) report.known.set(id, { count: 1, input });
      else seen.count++;
    } finally {
      report.executions++;
      const ms = performance.now() - at;
      report.targetMs += ms;
      if (ms > report.slowest.ms) report.slowest = { ms, input };
    }
  };

  /**
   * Finds which of `inputs`, run since the last take, ran new blocks: halves are run again until
   * one input is left (a few takes for each input kept, not one take per input). An input that
   * ran new blocks joins the corpus.
   */
  const attribute = (inputs: Uint8Array[], cov: Coverage) => {
    if (inputs.length === 0) return;
    for (const input of inputs) execute(input);
    const fresh = cov.take();
    if (fresh.size === 0) return;
    if (inputs.length === 1) {
      cov.add(fresh);
      corpus.push(...inputs);
      report.kept++;
      return;
    }
    const half = inputs.length >> 1;
    attribute(inputs.slice(0, half), cov);
    attribute(inputs.slice(half), cov);
  };

  const pending: Uint8Array[] = [];
  /** The batch run since the last take: when it ran something new, the inputs that did are found. */
  const flush = (cov: Coverage) => {
    const fresh = cov.take();
    if (fresh.size > 0) {
      const half = pending.length >> 1;
      attribute(pending.slice(0, half), cov);
      attribute(pending.slice(half), cov);
      // Blocks that ran only once (a first call's lazy set-up) are counted all the same.
      cov.add(fresh);
      batch = options.batch ?? 64;
    } else {
      batch = Math.min(batch * 2, MAX_BATCH);
    }
    pending.length = 0;
  };

  // The corpus first, as it is: each entry is a regression input too.
  coverage?.take();
  for (const input of corpus) {
    try {
      execute(input);
      coverage?.add(coverage.take());
    } catch (error) {
      report.failure = { input, error, seed: options.seed, path: null };
      report.elapsedMs = performance.now() - started;
      return report;
    }
  }

  const inputs = fc.oneof({ arbitrary: target.inputs, weight: 1 }, { arbitrary: mutated(() => corpus), weight: 3 });
  const property = fc.property(inputs, (input) => {
    execute(input);
    if (coverage === undefined) return;
    pending.push(input);
    if (pending.length >= batch) flush(coverage);
  });
  const details = fc.check<[Uint8Array]>(property, {
    seed: options.seed,
    numRuns: options.runs ?? Number.MAX_SAFE_INTEGER,
    // The plugin is typed for any property (Plugin<unknown>); this one's inputs are byte arrays.
    plugins: options.seconds === undefined ? [] : [fc.interruptAfterTimeLimit(options.seconds * 1000) as fc.Plugin<[Uint8Array]>],
  });
  if (details.failed && details.counterexample !== null) {
    report.failure = { input: details.counterexample[0], error: details.errorInstance, seed: details.seed, path: details.counterexamplePath };
  }
  report.elapsedMs = performance.now() - started;
  return report;
}
