// `netdiag monitor` as a child process for the suites (test/monitor/alerts-and-faults.test.ts, the timed
// monitor-link suite): the built command with a configuration file, its log lines as they come.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Readable } from 'node:stream';
import { CLI } from './process.js';

export interface MonitorProcess {
  child: ChildProcessByStdio<null, null, Readable>;
  /** Each whole line it has written to standard error so far. */
  lines: string[];
}

/**
 * Starts `netdiag monitor --config <config>` with a HOME of its own, and `env` besides. Schedules
 * down to one second are taken (NETDIAG_MONITOR_MIN_INTERVAL, docs/monitor.md "Schedules"), so a
 * suite sees runs each second rather than each minute.
 */
export function startMonitor(config: string, env: Record<string, string> = {}): MonitorProcess {
  const child = spawn(process.execPath, [CLI, 'monitor', '--config', config], { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), NETDIAG_MONITOR_MIN_INTERVAL: '1s', ...env } });
  const lines: string[] = [];
  let partial = '';
  child.stderr.on('data', (d: Buffer) => {
    partial += d.toString();
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
  });
  return { child, lines };
}

/** The log lines of the runs of the check named `check`. */
export const runLinesOf = (lines: readonly string[], check: string): string[] => lines.filter((l) => l.startsWith(`netdiag monitor: ${check} on `));

/** Resolves once `ok()` holds, polling every 100 ms; rejects naming `what` after `timeoutMs`. */
export async function until(what: string, ok: () => boolean, timeoutMs: number, lines: readonly string[] = []): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${lines.length > 0 ? `: ${lines.slice(-5).join(' | ')}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * A configuration file at `file` with one check, "line speed": a light speed test against `server`
 * every second, no spread, no listener; `lines` are the check's further settings (expect,
 * alert_after), `notify` its alert targets.
 */
export function everySecondSpeedConfig(file: string, server: string, database: string, lines: readonly string[], notify: readonly string[]): string {
  writeFileSync(
    file,
    [
      `servers: [${server}]`,
      `database: ${database}`,
      'listen: off',
      'checks:',
      '  - name: line speed',
      '    run: speedtest',
      '    mode: light',
      '    cron: "* * * * * *"',
      '    spread: 0s',
      ...lines.map((line) => `    ${line}`),
      `notify: [${notify.map((n) => JSON.stringify(n)).join(', ')}]`,
      '',
    ].join('\n'),
  );
  return file;
}
