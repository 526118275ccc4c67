// What the monitor's commands share (docs/monitor.md): where the configuration and the history
// live by default, reading the one and opening the other with faults said on standard error, and
// a run in a line of the log.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { terminalText } from '../terminal-text.js';
import { ConfigError, parseMonitorConfig, type MonitorConfig } from './monitor-config.js';
import { openStore, StoreError, type RunRecord, type Store } from './store.js';

/** The configuration file when none is named: $XDG_CONFIG_HOME/netdiag/monitor.yaml. */
export function defaultConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'netdiag', 'monitor.yaml');
}

/** The history when the configuration names none: $XDG_DATA_HOME/netdiag/monitor.db. */
function defaultDatabase(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share'), 'netdiag', 'monitor.db');
}

export const log = (line: string): void => {
  process.stderr.write(`netdiag monitor: ${terminalText(line)}\n`);
};

/** The configuration at `path`, or exit 2 with the fault's line and field. */
export function loadConfig(path: string): MonitorConfig | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    log(`cannot read the configuration ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file (docs/monitor.md in the netdiag repository has an example)' : err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
  try {
    return parseMonitorConfig(text, path, defaultDatabase());
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    log(err.message);
    return undefined;
  }
}

export async function openHistory(path: string): Promise<Store | undefined> {
  try {
    return await openStore(path);
  } catch (err) {
    if (!(err instanceof StoreError)) throw err;
    log(err.message);
    return undefined;
  }
}

/** The figures a line of the log shows for a run. */
export function summary(r: RunRecord, quote: (text: string) => string = String): string {
  if (!r.ok) return `failed: ${quote(r.error ?? '')}`;
  const shown = Object.entries(r.figures).filter(([, v]) => typeof v === 'number' || (typeof v === 'string' && v.length <= 40));
  return shown
    .slice(0, 6)
    .map(([k, v]) => `${k} ${typeof v === 'string' ? quote(v) : String(v)}`)
    .join(', ');
}
