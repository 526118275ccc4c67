// Alerts that mean something (docs/monitor.md, "Alerts"): a check's run is a breach when it
// missed an expectation or did not run at all (a server down is trouble too); an alert goes out
// once, after `alert_after` breaches in a row, and one recovery notice when a run meets every
// expectation again, nothing in between. Delivery is retried with backoff and logged, and never
// holds up the schedule.
import { spawn } from 'node:child_process';
import type { AlertState } from './store.js';

interface Notice {
  kind: 'alert' | 'recovery';
  title: string;
  body: string;
  check: string;
  server: string;
}

/** The state after one run, and the notice it calls for, if any. */
export function afterRun(state: AlertState, breached: boolean, alertAfter: number): { state: AlertState; send: 'alert' | 'recovery' | undefined } {
  if (breached) {
    const streak = state.streak + 1;
    if (!state.alerting && streak >= alertAfter) return { state: { streak, alerting: true }, send: 'alert' };
    return { state: { streak, alerting: state.alerting }, send: undefined };
  }
  return { state: { streak: 0, alerting: false }, send: state.alerting ? 'recovery' : undefined };
}

/** A notice's words: the check, the server, and each breach with its figure and threshold. */
export function noticeFor(kind: Notice['kind'], check: string, server: string, streak: number, reasons: readonly string[]): Notice {
  const title = kind === 'alert' ? `netdiag monitor: ${check} on ${server}: ${String(streak)} breaches in a row` : `netdiag monitor: ${check} on ${server} recovered`;
  const body = kind === 'alert' ? reasons.map((r) => `- ${r}`).join('\n') : `The last run met every expectation${reasons.length > 0 ? `: ${reasons.join(', ')}` : ''}.`;
  return { kind, title, body, check, server };
}

/**
 * POSTs to `url`. Credentials in it (`https://user:token@hooks.example/`) go as Basic
 * authentication (RFC 7617), which fetch will not take from a URL; a failure's words never repeat
 * the URL, whose path or query may hold a token too (the log names the target by its host).
 */
async function post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<void> {
  const parsed = new URL(url);
  const auth: Record<string, string> = parsed.username === '' && parsed.password === '' ? {} : { Authorization: `Basic ${Buffer.from(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`).toString('base64')}` };
  parsed.username = '';
  parsed.password = '';
  const res = await fetch(parsed, { method: 'POST', headers: { ...headers, ...auth }, body, signal: AbortSignal.timeout(timeoutMs) });
  await res.body?.cancel();
  if (!res.ok) throw new Error(`answered ${String(res.status)}`);
}

/** How a notice is sent to one target, by its scheme. */
async function sendOnce(target: string, notice: Notice, timeoutMs: number): Promise<void> {
  const url = /^(https?|ntfys?):\/\//i.exec(target);
  const scheme = url?.[1]?.toLowerCase();
  if (scheme === 'http' || scheme === 'https') {
    await post(target, { 'Content-Type': 'application/json' }, JSON.stringify(notice), timeoutMs);
    return;
  }
  if (scheme === 'ntfy' || scheme === 'ntfys') {
    // ntfy: the topic's URL takes the message as its body and the title as a header.
    await post(target.replace(/^ntfy(s?):\/\//i, (_, s: string) => `http${s}://`), { Title: notice.title }, notice.body, timeoutMs);
    return;
  }
  // Any other scheme is an Apprise URL: the `apprise` command (Debian's apprise package) sends it.
  await new Promise<void>((resolve, reject) => {
    const child = spawn('apprise', ['-t', notice.title, '-b', notice.body, target], { stdio: ['ignore', 'ignore', 'pipe'], timeout: timeoutMs });
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

export interface Delivery {
  /** Sends `notice` to every target in the background, retrying each with backoff. */
  send(notice: Notice): void;
  /** Resolves when every delivery begun has ended (sent or given up). */
  settled(): Promise<void>;
}

/** Delivers notices to `targets`, retrying each up to `backoffMs.length` more times after the waits given. */
export function delivery(targets: readonly string[], log: (line: string) => void, backoffMs: readonly number[] = [5_000, 30_000, 120_000], timeoutMs = 30_000): Delivery {
  const pending = new Set<Promise<void>>();
  const deliver = async (target: string, notice: Notice) => {
    for (let attempt = 0; ; attempt++) {
      try {
        await sendOnce(target, notice, timeoutMs);
        return;
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        const wait = backoffMs[attempt];
        if (wait === undefined) {
          log(`the ${notice.kind} for ${notice.check} on ${notice.server} was not delivered to ${redacted(target)}: ${reason}; given up after ${String(attempt + 1)} tries`);
          return;
        }
        log(`the ${notice.kind} for ${notice.check} on ${notice.server} was not delivered to ${redacted(target)}: ${reason}; trying again in ${String(Math.round(wait / 1000))} s`);
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  };
  return {
    send: (notice) => {
      for (const target of targets) {
        const p = deliver(target, notice).finally(() => pending.delete(p));
        pending.add(p);
      }
    },
    settled: async () => {
      await Promise.all(pending);
    },
  };
}

/** A target as a log line may show it: an Apprise or webhook URL often carries a token, so only its scheme and host. */
function redacted(target: string): string {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*@)?([^/?#]*)/i.exec(target);
  return match === null ? 'a target' : `${match[1] ?? ''}${match[3] ?? ''}/…`;
}
