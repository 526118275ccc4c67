// `npm test`: every step runs, in order, whatever the earlier ones gave, and the exit status is
// non-zero if any failed. Chained with `&&`, a failing type-check or Node suite hid whether the
// workerd suites passed. Each step's output is streamed as it comes; at the end one
// line names each step's outcome and how long it took. It names steps, never counts, so the
// closing lines of each vitest run ("Test Files …", "Tests …") stay the only test counts.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// Each vitest step also writes a JSON report here, so the run can end by naming the tests that
// failed: a CI log is often read from its tail, and vitest names a failure far above its own
// closing lines, behind the later steps' output.
const reports = join(root, 'test-results', 'npm-test');
rmSync(reports, { recursive: true, force: true });
mkdirSync(reports, { recursive: true });
const reportArgs = (file) => ['--reporter=default', '--reporter=json', `--outputFile.json=${join(reports, file)}`];

/** The steps of `npm test`, after npm's own `pretest` (the build). */
const STEPS = [
  // First: the contract in-process, seconds on any machine (no root, no system package).
  { name: 'contract (in-process)', command: 'vitest', args: ['run', '--config', 'vitest.contract.config.ts', ...reportArgs('contract.json')], report: 'contract.json' },
  { name: 'typecheck', command: 'npm', args: ['run', 'typecheck'] },
  { name: 'lint', command: 'npm', args: ['run', 'lint'] },
  // With each file's whole time at the end (test/support/file-times-reporter.ts).
  { name: 'node suites', command: 'vitest', args: ['run', ...reportArgs('node.json'), '--reporter=./test/support/file-times-reporter.ts'], report: 'node.json' },
  { name: 'workerd suites', command: 'npm', args: ['run', 'test:workers', '--', ...reportArgs('workerd.json')], report: 'workerd.json' },
  // Last and alone: the speed test on shaped links measures rates, so it runs once nothing else
  // loads the machine (root; skipped with a notice without it, failed under CI=true).
  {
    name: 'timed suites',
    command: 'vitest',
    args: ['run', '--config', 'vitest.timed.config.ts', ...reportArgs('timed.json')],
    report: 'timed.json',
  },
];

/** The failed tests a step's JSON report names, each with the first lines of its error. */
function failuresIn(step) {
  let report;
  try {
    report = JSON.parse(readFileSync(join(reports, step.report), 'utf8'));
  } catch {
    return [`(no report from ${step.name}: see its output above)`];
  }
  const lines = [];
  for (const file of report.testResults ?? []) {
    const name = file.name.startsWith(root) ? file.name.slice(root.length + 1) : file.name;
    const failed = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
    // A file that failed with no failed test failed outside one (a hook, an import, a crash).
    if (failed.length === 0 && file.status === 'failed') lines.push(`${name}: ${firstLines(file.message)}`);
    for (const t of failed) lines.push(`${name} > ${t.fullName}: ${firstLines(t.failureMessages?.[0])}`);
  }
  return lines.length > 0 ? lines : [`(the report names no failed test: see ${step.name}' output above)`];
}

function firstLines(text) {
  return String(text ?? '').split('\n').slice(0, 6).join('\n    ');
}

// Run outside npm too (`node scripts/test-all.mjs`): the project's binaries come first, as npm
// puts them, so `vitest` and the project's Node 22 (the `node` devDependency) are found.
const env = { ...process.env, PATH: `${join(root, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` };

/** The child running now, so a signal to this script reaches it; null between steps. */
let current = null;
let interruptedBy = null;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    // Ctrl-C or a CI cancel stops the whole run: the step running ends, no later step starts.
    // Ctrl-C already reaches the step (the terminal signals the whole foreground group), and a
    // second SIGINT makes vitest quit without its teardown, so only the others are passed on.
    interruptedBy = signal;
    if (signal !== 'SIGINT') current?.kill(signal);
  });
}

function run(step) {
  return new Promise((resolve) => {
    const child = spawn(step.command, step.args, { cwd: root, env, stdio: 'inherit' });
    current = child;
    let startError = false;
    child.on('error', (err) => {
      startError = true;
      // A command that cannot start (not installed) is that step's failure, said in its words.
      process.stderr.write(`test-all: ${step.name}: could not run ${step.command}: ${err.message}\n`);
    });
    child.on('close', (code, signal) => {
      current = null;
      if (startError) resolve('FAILED (could not start)');
      else resolve(code === 0 ? 'ok' : signal !== null ? `FAILED (${signal})` : `FAILED (exit ${String(code)})`);
    });
  });
}

const outcomes = [];
for (const step of STEPS) {
  if (interruptedBy !== null) {
    outcomes.push({ name: step.name, outcome: 'not run' });
    continue;
  }
  process.stdout.write(`\n=== npm test step: ${step.name} (${[step.command, ...step.args].join(' ')})\n\n`);
  const started = performance.now();
  const outcome = await run(step);
  outcomes.push({ name: step.name, outcome, seconds: Math.round((performance.now() - started) / 1000) });
}

const failed = outcomes.filter((o) => o.outcome !== 'ok');
const took = (o) => (o.seconds === undefined ? '' : ` (${String(o.seconds)} s)`);
process.stdout.write(`\nnpm test steps: ${outcomes.map((o) => `${o.name} ${o.outcome}${took(o)}`).join(', ')}\n`);
if (interruptedBy !== null) {
  process.stdout.write(`npm test stopped by ${interruptedBy}\n`);
  // As a shell reports a command ended by a signal: 128 + its number (130 for Ctrl-C).
  process.exit(128 + constants.signals[interruptedBy]);
}
if (failed.length > 0) {
  for (const o of failed) {
    const step = STEPS.find((s) => s.name === o.name);
    if (step?.report === undefined || o.outcome === 'not run') continue;
    process.stdout.write(`\nfailed in ${o.name}:\n${failuresIn(step).map((l) => `  ${l}`).join('\n')}\n`);
  }
  process.stdout.write(`npm test FAILED in: ${failed.map((o) => o.name).join(', ')}\n`);
  process.exit(1);
}
