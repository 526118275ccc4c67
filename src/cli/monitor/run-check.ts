// One run of a monitor check: the netdiag command itself, as a child process with --json, against
// one server, so the monitor measures exactly as `netdiag speedtest` or `netdiag rpm` does and a
// fault in a test never takes the monitor down. A command that fails (the server down, a refused
// test) is a run that did not run, with the command's own reason; one the server's rate limit
// refused past the wait it asked for (exit 4, docs/command-line.md "Exit status") is a limited
// run: the server said "not now", which says nothing of the connection.
import { spawn } from 'node:child_process';
import { RATE_LIMITED_EXIT } from '../api/rate-limit.js';
import { answeredDespiteExit, argsOf, bytesMoved, readFigures } from './checks/kinds.js';
import type { MonitorCheck } from './monitor-config.js';

export interface CheckOutcome {
  ok: boolean;
  /** The server's rate limit refused it (ok is false). */
  limited: boolean;
  error: string | null;
  figures: Record<string, unknown>;
  /** Bytes the run moved each way, as the command's --json reported them (checks/kinds.ts bytesMoved), or null. */
  bytes: { down: number; up: number } | null;
  durationMs: number;
}

/** The longest a run may take before it is stopped and recorded as failed. */
const RUN_LIMIT_MS = 5 * 60_000;

/** The command's --json as an object, or what it printed instead. */
function jsonObject(stdout: string): Readonly<Record<string, unknown>> | 'no JSON' | 'no JSON object' {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return 'no JSON';
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : 'no JSON object';
}

/** Runs the check with this netdiag (`entry`, the script this process runs) and reads its JSON. */
export function runCheck(entry: string, check: MonitorCheck, server: string, signal: AbortSignal, limitMs = RUN_LIMIT_MS): Promise<CheckOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const args = [...argsOf(check, server), ...(check.source === null ? [] : ['--source', check.source])];
    const child = spawn(process.execPath, [entry, ...args], { stdio: ['ignore', 'pipe', 'pipe'], signal, timeout: limitMs, killSignal: 'SIGKILL', env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const done = (error: string | null, figures: Record<string, unknown> = {}, limited = false, bytes: CheckOutcome['bytes'] = null) => {
      resolve({ ok: error === null, limited, error, figures, bytes, durationMs: performance.now() - started });
    };
    child.on('error', (err) => {
      if (err.name !== 'AbortError') done(err.message);
    });
    child.on('close', (code, sig) => {
      if (signal.aborted) {
        done('stopped with the monitor');
        return;
      }
      if (sig !== null) {
        done(`stopped after ${String(Math.round(limitMs / 1000))} s without an answer`);
        return;
      }
      // The command's own last line of reason ("netdiag: the speed test failed: ...").
      const reason = stderr.trim().split('\n').filter((l) => !/ExperimentalWarning|--trace-warnings/.test(l)).at(-1)?.replace(/^netdiag: /, '');
      const json = jsonObject(stdout);
      // A run that failed part way moved bytes all the same: the budget counts them.
      const bytes = typeof json === 'object' ? bytesMoved(check.run, json) : null;
      if (code !== 0 && !(typeof json === 'object' && answeredDespiteExit(check.run, json))) {
        done(reason ?? `exit ${String(code)}`, {}, code === RATE_LIMITED_EXIT, bytes);
        return;
      }
      const figures = typeof json === 'string' ? `the command printed ${json}` : readFigures(check.run, json);
      if (typeof figures === 'string') done(figures, {}, false, bytes);
      else done(null, figures, false, bytes);
    });
  });
}
