// One run of a monitor check: the netdiag command itself, as a child process with --json, against
// one server, so the monitor measures exactly as `netdiag speedtest` or `netdiag rpm` does and a
// fault in a test never takes the monitor down. A command that fails (the server down, a refused
// test) is a run that did not run, with the command's own reason.
import { spawn } from 'node:child_process';
import type { MonitorCheck } from './config.js';

interface CheckOutcome {
  ok: boolean;
  error: string | null;
  figures: Record<string, unknown>;
  durationMs: number;
}

/** The longest a run may take before it is stopped and recorded as failed. */
const RUN_LIMIT_MS = 5 * 60_000;

/** The command line of a check against `server`. */
function checkArgs(check: MonitorCheck, server: string): string[] {
  switch (check.run) {
    case 'speedtest':
      return ['speedtest', '--mode', check.mode, '--json', '--no-analytics', '--url', server];
    case 'rpm':
      return ['rpm', '--json', '--url', server];
  }
}

/** Runs the check with this netdiag (`entry`, the script this process runs) and reads its JSON. */
export function runCheck(entry: string, check: MonitorCheck, server: string, signal: AbortSignal, limitMs = RUN_LIMIT_MS): Promise<CheckOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [entry, ...checkArgs(check, server)], { stdio: ['ignore', 'pipe', 'pipe'], signal, timeout: limitMs, killSignal: 'SIGKILL', env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const done = (error: string | null, figures: Record<string, unknown> = {}) => {
      resolve({ ok: error === null, error, figures, durationMs: performance.now() - started });
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
      if (code !== 0) {
        done(reason ?? `exit ${String(code)}`);
        return;
      }
      try {
        const parsed = JSON.parse(stdout) as unknown;
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) done('the command printed no JSON object');
        else done(null, parsed as Record<string, unknown>);
      } catch {
        done('the command printed no JSON');
      }
    });
  });
}
