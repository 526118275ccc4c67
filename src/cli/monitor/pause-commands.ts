// `netdiag monitor pause DURATION` and `netdiag monitor resume` (docs/monitor.md, "Pausing"): ask
// the running monitor through its listener (the configuration's `listen:`), showing the token it
// keeps beside the history. The pause is the monitor's to keep (in its history): a stopped monitor
// is not paused from here.
import { print } from '../terminal/output.js';
import { controlTokenPath, readControlToken } from './control-token.js';
import { durationMs, type MonitorConfig } from './monitor-config.js';
import { MAX_PAUSE_MS } from './gates/pause.js';
import { loadMonitorConfig, log } from './setup.js';

/** How long the monitor may take to answer, ms: it answers from its history at once. */
const ANSWER_TIMEOUT_MS = 10_000;

/** The listener's URL as this machine reaches it: a wildcard listen address is reached on loopback. */
function listenerUrl(listen: NonNullable<MonitorConfig['listen']>): string {
  const host = listen.host === '0.0.0.0' ? '127.0.0.1' : listen.host === '::' ? '::1' : listen.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${String(listen.port)}`;
}

/** POSTs the control to the running monitor of `configPath`; the exit status, having said the outcome or the fault. */
async function askMonitor(configPath: string, action: 'pause' | 'resume', body: Record<string, unknown>): Promise<number> {
  const config = loadMonitorConfig(configPath);
  if (config === undefined) return 2;
  if (config.listen === null) {
    log(`the monitor of ${configPath} has no listener (listen: off), so it cannot be paused or resumed from here; give \`listen:\` an address (127.0.0.1:9465) and restart it`);
    return 2;
  }
  const token = readControlToken(config.database);
  if (token === undefined) {
    log(`no monitor is running on the history ${config.database} (it keeps its token at ${controlTokenPath(config.database)} while it runs)`);
    return 1;
  }
  const url = `${listenerUrl(config.listen)}/control/${action}`;
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS) });
  } catch (err) {
    log(`the monitor did not answer at ${url}: ${err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err)}`);
    return 1;
  }
  const answer = (await res.json().catch(() => ({}))) as { paused_until?: string | null; error?: string };
  if (!res.ok) {
    log(`the monitor refused: ${answer.error ?? `it answered ${String(res.status)}`}`);
    return 1;
  }
  print(typeof answer.paused_until === 'string' ? `paused until ${answer.paused_until} (netdiag monitor resume ends it)` : 'not paused: the checks run at their next slots');
  return 0;
}

/** `netdiag monitor pause DURATION`. */
export async function pauseCommand(configPath: string, duration: string): Promise<number> {
  const ms = durationMs(duration);
  if (ms === undefined || ms <= 0 || ms > MAX_PAUSE_MS) {
    log(`"${duration}" is not a duration from 1s to 30d (90s, 30m, 2h, 7d)`);
    return 2;
  }
  return askMonitor(configPath, 'pause', { for: duration });
}

/** `netdiag monitor resume`. */
export const resumeCommand = (configPath: string): Promise<number> => askMonitor(configPath, 'resume', {});
