// Alerts that mean something (docs/monitor.md, "Alerts"): a check's run is a breach when it
// missed an expectation or did not run at all (a server down is trouble too); an alert goes out
// once, after `alert_after` breaches in a row, and one recovery notice when a run meets every
// expectation again, nothing in between. Delivery is retried with backoff and logged, never holds
// up the schedule, and never holds up a stop: each notice is kept in the history's outbox until it
// is delivered or given up, so one pending when the monitor stops is sent after the next start.
import { setTimeout as sleep } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import type { AlertState, Store } from './store.js';

/** A notice as a webhook receives it (docs/monitor.md, "Alerts"). */
export interface Notice {
  kind: 'alert' | 'recovery';
  title: string;
  body: string;
  check: string;
  server: string;
}

/** A run as an alert recounts it: when it started and what it missed, in the alert's words. */
export interface MissedRun {
  startedAt: number;
  missed: readonly string[];
}

/** The most runs an alert's body lists one by one; any earlier ones in the streak are counted in a line. */
export const ALERT_RUNS_SHOWN = 10;

/** The state after one run, and the notice it calls for, if any. */
export function afterRun(state: AlertState, breached: boolean, alertAfter: number): { state: AlertState; send: 'alert' | 'recovery' | undefined } {
  if (breached) {
    const streak = state.streak + 1;
    if (!state.alerting && streak >= alertAfter) return { state: { streak, alerting: true }, send: 'alert' };
    return { state: { streak, alerting: state.alerting }, send: undefined };
  }
  return { state: { streak: 0, alerting: false }, send: state.alerting ? 'recovery' : undefined };
}

const breachesText = (n: number): string => (n === 1 ? '1 breach' : `${String(n)} breaches in a row`);
const timeText = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`;

/**
 * An alert: its title counts the breaches in a row, its body accounts for each (oldest first):
 * the run's start and what it missed; past ALERT_RUNS_SHOWN, or when the history no longer holds
 * them, the earlier ones are counted in a line of their own, so the title never counts what the
 * body does not show.
 */
export function alertNotice(check: string, server: string, streak: number, runs: readonly MissedRun[]): Notice {
  const shown = [...runs].sort((a, b) => a.startedAt - b.startedAt).slice(-Math.min(streak, ALERT_RUNS_SHOWN));
  const earlier = streak - shown.length;
  const first = shown[0];
  const lines = [
    ...(earlier > 0 ? [`- ${String(earlier)} earlier run${earlier === 1 ? '' : 's'}${first === undefined ? '' : ` before ${timeText(first.startedAt)}`}, ${earlier === 1 ? 'a breach too (netdiag monitor history lists it)' : 'each a breach too (netdiag monitor history lists them)'}`] : []),
    ...shown.map((r) => `- ${timeText(r.startedAt)}: ${r.missed.join('; ')}`),
  ];
  return { kind: 'alert', title: `netdiag monitor: ${check} on ${server}: ${breachesText(streak)}`, body: lines.join('\n'), check, server };
}

/** A recovery: the run that met every expectation, with its figures. */
export function recoveryNotice(check: string, server: string, figures: string): Notice {
  return { kind: 'recovery', title: `netdiag monitor: ${check} on ${server} recovered`, body: `The last run met every expectation${figures === '' ? '' : `: ${figures}`}.`, check, server };
}

/**
 * POSTs to `url`. Credentials in it (`https://user:token@hooks.example/`) go as Basic
 * authentication (RFC 7617), which fetch will not take from a URL; a failure's words never repeat
 * the URL, whose path or query may hold a token too (the log names the target by its host).
 */
async function post(url: string, headers: Record<string, string>, body: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
  const parsed = new URL(url);
  const auth: Record<string, string> = parsed.username === '' && parsed.password === '' ? {} : { Authorization: `Basic ${Buffer.from(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`).toString('base64')}` };
  parsed.username = '';
  parsed.password = '';
  // Either ends the send (not AbortSignal.any: the client package runs on Node 20.0, which lacks it).
  const either = new AbortController();
  const timer = setTimeout(() => {
    either.abort(new DOMException('The operation timed out.', 'TimeoutError'));
  }, timeoutMs);
  const cut = () => {
    either.abort(signal.reason);
  };
  signal.addEventListener('abort', cut, { once: true });
  try {
    const res = await fetch(parsed, { method: 'POST', headers: { ...headers, ...auth }, body, signal: either.signal });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`answered ${String(res.status)}`);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', cut);
  }
}

/** Apprise's notification type (`apprise --help`: info, success, warning, failure), so a chat shows an alert and a recovery apart. */
const APPRISE_TYPE: Readonly<Record<Notice['kind'], string>> = { alert: 'failure', recovery: 'success' };

/** How a notice is sent to one target, by its scheme; `signal` ends a send under way. */
async function sendOnce(target: string, notice: Notice, timeoutMs: number, signal: AbortSignal): Promise<void> {
  const url = /^(https?|ntfys?):\/\//i.exec(target);
  const scheme = url?.[1]?.toLowerCase();
  if (scheme === 'http' || scheme === 'https') {
    await post(target, { 'Content-Type': 'application/json' }, JSON.stringify(notice), timeoutMs, signal);
    return;
  }
  if (scheme === 'ntfy' || scheme === 'ntfys') {
    // ntfy: the topic's URL takes the message as its body and the title as a header.
    await post(target.replace(/^ntfy(s?):\/\//i, (_, s: string) => `http${s}://`), { Title: notice.title }, notice.body, timeoutMs, signal);
    return;
  }
  // Any other scheme is an Apprise URL: the `apprise` command (Debian's apprise package) sends it.
  await new Promise<void>((resolve, reject) => {
    const child = spawn('apprise', ['-n', APPRISE_TYPE[notice.kind], '-t', notice.title, '-b', notice.body, target], { stdio: ['ignore', 'ignore', 'pipe'], timeout: timeoutMs, signal });
    let said = '';
    child.stderr.on('data', (d: Buffer) => (said += d.toString()));
    child.on('error', (err: NodeJS.ErrnoException) => {
      reject(new Error(err.code === 'ENOENT' ? 'the apprise command is not installed (Debian: apt-get install apprise)' : err.message));
    });
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`apprise exited ${String(code)}${said.trim() === '' ? '' : `: ${said.trim().split('\n').at(-1) ?? ''}`}`));
    });
  });
}

/** A notice kept in the outbox for one target, under its row's id. */
export interface KeptNotice {
  id: number;
  target: string;
  notice: Notice;
}

export interface Delivery {
  /** The targets it sends to, in the configuration's order. */
  targets: readonly string[];
  /** Keeps `notice` for every target in the outbox and sends it in the background, retrying each with backoff. */
  send(notice: Notice): void;
  /** Sends notices already kept in the outbox (a run's, recorded with it) in the background, retrying each with backoff. */
  deliver(kept: readonly KeptNotice[]): void;
  /** Sends what the outbox kept from before (a stop, a crash): to a target still configured, once; one no longer configured is dropped, said. */
  resume(): void;
  /** Resolves when every delivery begun has ended (sent or given up). */
  settled(): Promise<void>;
  /**
   * Ends every delivery: waits for a retry end at once, a send under way gets `graceMs` to finish;
   * what is not delivered stays in the outbox for the next start.
   */
  stop(graceMs?: number, until?: string): Promise<void>;
}

/** What delivery keeps in the history (store.ts). */
type Outbox = Pick<Store, 'queueNotice' | 'noticeTried' | 'noticeDone' | 'pendingNotices'>;

interface DeliveryOptions {
  /** Where notices are kept until delivered; none keeps them in memory only. */
  outbox?: Outbox;
  /** The waits before each further try. */
  backoffMs?: readonly number[];
  /** The longest one try may take. */
  timeoutMs?: number;
}

/** How long a send under way may go on once the monitor stops: short, so a stop ends within seconds (systemd waits 90 s, then kills). */
const STOP_GRACE_MS = 3_000;

/** A kept notice read back, or undefined when it is not one (a row another netdiag wrote). */
function noticeOf(json: string): Notice | undefined {
  try {
    const n = JSON.parse(json) as Partial<Notice>;
    const text = (v: unknown): v is string => typeof v === 'string';
    return (n.kind === 'alert' || n.kind === 'recovery') && text(n.title) && text(n.body) && text(n.check) && text(n.server) ? { kind: n.kind, title: n.title, body: n.body, check: n.check, server: n.server } : undefined;
  } catch {
    return undefined;
  }
}

/** What sending with retries needs of the delivery. */
interface Retries {
  outbox?: Outbox;
  backoffMs: readonly number[];
  timeoutMs: number;
  log: (line: string) => void;
  /** Runs an outbox write, a fault said and not thrown. */
  kept: (what: () => void) => void;
  /** Ends the waits between tries. */
  ending: AbortSignal;
  /** Ends a send under way. */
  cut: AbortSignal;
  /** When a notice kept by a stop goes out again, in words. */
  resent: () => string;
}

/** Sends `notice` to `target` until it is delivered, given up, or the sends end; its outbox row (`id`) kept in step. */
async function deliverWithRetries(r: Retries, target: string, notice: Notice, id: number | undefined, tried: number): Promise<void> {
  const { outbox, backoffMs, timeoutMs, log, kept } = r;
  const about = `the ${notice.kind} for ${notice.check} on ${notice.server}`;
  for (let attempt = tried; ; attempt++) {
    try {
      await sendOnce(target, notice, timeoutMs, r.cut);
      if (id !== undefined) kept(() => outbox?.noticeDone(id));
      return;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      const wait = backoffMs[attempt];
      if (wait === undefined) {
        log(`${about} was not delivered to ${redacted(target)}: ${reason}; given up after ${String(attempt + 1)} tries`);
        if (id !== undefined) kept(() => outbox?.noticeDone(id));
        return;
      }
      if (id !== undefined) kept(() => outbox?.noticeTried(id, attempt + 1));
      if (r.ending.aborted) {
        log(`${about} was not delivered to ${redacted(target)}: ${reason}; ${id === undefined ? 'not kept (no history)' : `kept, to be sent ${r.resent()}`}`);
        return;
      }
      log(`${about} was not delivered to ${redacted(target)}: ${reason}; trying again in ${String(Math.round(wait / 1000))} s`);
      const waited = await sleep(wait, true, { signal: r.ending }).catch(() => false);
      if (!waited) {
        log(`${about} is kept for ${redacted(target)}, to be sent ${r.resent()}`);
        return;
      }
    }
  }
}

/** Delivers notices to `targets`, retrying each up to `backoffMs.length` more times after the waits given. */
export function delivery(targets: readonly string[], log: (line: string) => void, options: DeliveryOptions = {}): Delivery {
  const { outbox, backoffMs = [5_000, 30_000, 120_000], timeoutMs = 30_000 } = options;
  const pending = new Set<Promise<void>>();
  /** Ends the waits between tries. */
  const ending = new AbortController();
  /** Ends a send under way (after the grace). */
  const cut = new AbortController();
  /** When a notice kept by stop() goes out again: after the next start, or at once for a reload. */
  let resent = 'after the next start';
  // The outbox is the history: a fault writing it is said, and the notice goes on being sent.
  const kept = (what: () => void) => {
    try {
      what();
    } catch (err) {
      log(err instanceof Error ? err.message : String(err));
    }
  };
  const retries: Retries = { backoffMs, timeoutMs, log, kept, ending: ending.signal, cut: cut.signal, resent: () => resent, ...(outbox === undefined ? {} : { outbox }) };
  const begin = (target: string, notice: Notice, id: number | undefined, tried: number) => {
    const p = deliverWithRetries(retries, target, notice, id, tried).finally(() => pending.delete(p));
    pending.add(p);
  };
  return {
    targets,
    send: (notice) => {
      for (const target of targets) begin(target, notice, outbox?.queueNotice(JSON.stringify(notice), target), 0);
    },
    deliver: (kept) => {
      for (const { id, target, notice } of kept) begin(target, notice, id, 0);
    },
    resume: () => {
      for (const row of outbox?.pendingNotices() ?? []) {
        const notice = noticeOf(row.notice);
        if (notice !== undefined && targets.includes(row.target)) {
          log(`the ${notice.kind} for ${notice.check} on ${notice.server} kept from before is sent to ${redacted(row.target)}`);
          begin(row.target, notice, row.id, row.attempts);
          continue;
        }
        log(notice === undefined ? 'a kept notice that cannot be read is dropped' : `the ${notice.kind} for ${notice.check} on ${notice.server} kept for ${redacted(row.target)} is dropped: that target is no longer in notify`);
        kept(() => outbox?.noticeDone(row.id));
      }
    },
    settled: async () => {
      await Promise.all(pending);
    },
    stop: async (graceMs = STOP_GRACE_MS, until = 'after the next start') => {
      resent = until;
      ending.abort();
      const timer = setTimeout(() => {
        cut.abort();
      }, graceMs);
      await Promise.all(pending);
      clearTimeout(timer);
    },
  };
}

/** A target as a log line may show it: an Apprise or webhook URL often carries a token, so only its scheme and host. */
function redacted(target: string): string {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*@)?([^/?#]*)/i.exec(target);
  return match === null ? 'a target' : `${match[1] ?? ''}${match[3] ?? ''}/…`;
}
