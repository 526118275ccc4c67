// The long run: one target (or all, one after another) for a time, with coverage feedback, and its
// figures at the end. Runs the TypeScript sources as they are (no build), through Node's type
// stripping and the resolve hook in register.ts; `npm run fuzz:long -- <target> --seconds 600`.
//
//   fuzz/run.ts <target|all> [--seconds N] [--runs N] [--seed N] [--batch N] [--no-coverage] [--save DIR]
//   fuzz/run.ts <target> --replay FILE...      runs the target once on each file, and says what broke
//
// A failure is written to fuzz/crashes/ (not committed) and printed; the exit status is then 1.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { CampaignReport } from './campaign.js';
import { readCorpus, writeInput } from './corpus.js';
import { Coverage } from './coverage.js';
import type { TargetName } from './registry.js';

const ROOT = join(import.meta.dirname, '..');

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: 'string' },
    runs: { type: 'string' },
    seed: { type: 'string' },
    batch: { type: 'string' },
    'no-coverage': { type: 'boolean', default: false },
    save: { type: 'string' },
    replay: { type: 'boolean', default: false },
  },
});

// Coverage starts before the targets and the parsers load: V8 gives block counts only to code
// compiled after it started, and a module's top level runs at import (the forwarded target's
// trust list, say, compiles ipaddr.js functions the address target then measures).
const coverage = values['no-coverage'] || values.replay ? undefined : new Coverage();
const { runCampaign } = await import('./campaign.js');
const { isTargetName, TARGET_NAMES, TARGETS } = await import('./registry.js');

const [which = '', ...rest] = positionals;
const names: TargetName[] = which === 'all' ? TARGET_NAMES : isTargetName(which) ? [which] : [];
if (names.length === 0 || (values.replay ? rest.length === 0 : rest.length > 0)) {
  console.error(`usage: fuzz/run.ts <${TARGET_NAMES.join('|')}|all> [--seconds N] [--runs N] [--seed N] [--batch N] [--no-coverage] [--save DIR]`);
  console.error('       fuzz/run.ts <target> --replay FILE...');
  process.exit(2);
}

/** An input as text a reader can paste: JSON string of its latin1 reading, and hex. */
const show = (input: Uint8Array) => `${JSON.stringify(Buffer.from(input).toString('latin1'))}\n  hex ${Buffer.from(input).toString('hex')}`;

if (values.replay) {
  let failed = false;
  for (const name of names) {
    for (const file of rest) {
      const input = readFileSync(file);
      try {
        const started = performance.now();
        TARGETS[name].fuzz(input);
        console.log(`${name} ${file}: holds every invariant (${(performance.now() - started).toFixed(2)} ms)`);
      } catch (err) {
        failed = true;
        console.log(`${name} ${file}:`, err);
      }
    }
  }
  process.exit(failed ? 1 : 0);
}

const number = (text: string | undefined): number | undefined => (text === undefined ? undefined : Number(text));
const seconds = number(values.seconds);
const runs = number(values.runs) ?? (seconds === undefined ? 100_000 : undefined);
let status = 0;

for (const name of names) {
  const corpus = readCorpus(name).map((e) => e.bytes);
  const seeds = corpus.length;
  coverage?.reset();
  const report: CampaignReport = runCampaign({
    target: TARGETS[name],
    seed: number(values.seed) ?? Date.now() & 0x7fffffff,
    corpus,
    tolerateKnown: true,
    batch: number(values.batch),
    ...(runs === undefined ? {} : { runs }),
    ...(seconds === undefined ? {} : { seconds }),
    ...(coverage === undefined ? {} : { coverage }),
  });
  const covered = coverage?.summary(ROOT);

  const perSecond = Math.round(report.executions / (report.elapsedMs / 1000));
  console.log(`\n${name}: ${report.executions.toLocaleString('en')} executions in ${(report.elapsedMs / 1000).toFixed(1)} s (${perSecond.toLocaleString('en')}/s)`);
  console.log(`  corpus: ${String(seeds)} seeds + ${String(report.kept)} kept for new coverage = ${String(corpus.length)}`);
  if (covered !== undefined) {
    const share = (c: { covered: number; seen: number }) => `${String(c.covered).padStart(5)} of ${String(c.seen).padStart(5)} blocks seen`;
    console.log(`  covered: ${share(covered)}`);
    for (const [file, counts] of [...covered.byFile].sort((a, b) => b[1].covered - a[1].covered)) console.log(`    ${share(counts)}  ${file}`);
  }
  console.log(`  time in the target: ${String(Math.round((100 * report.targetMs) / report.elapsedMs))}%`);
  // A slow input may be a pause of the collector, or a parser's worst case: replay it to tell.
  console.log(`  slowest input: ${report.slowest.ms.toFixed(2)} ms (${String(report.slowest.input.length)} bytes), hex ${Buffer.from(report.slowest.input.subarray(0, 256)).toString('hex')}`);
  for (const [invariant, { count, input }] of report.known) {
    console.log(`  known finding ${invariant}: ${String(count)} inputs, the first:\n  ${show(input)}`);
  }
  if (values.save !== undefined) {
    for (const input of corpus.slice(seeds)) writeInput(join(values.save, name), input);
    console.log(`  kept inputs written to ${join(values.save, name)}`);
  }
  if (report.failure !== undefined) {
    status = 1;
    const path = writeInput(join(import.meta.dirname, 'crashes'), report.failure.input, `${name}-`);
    console.log(`  FAILURE (seed ${String(report.failure.seed)}${report.failure.path === null ? ', in the corpus' : `, path ${report.failure.path}`}), input written to ${path}:\n  ${show(report.failure.input)}`);
    console.log(report.failure.error);
  }
}
coverage?.close();
process.exit(status);
