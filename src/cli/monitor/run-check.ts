// One run of a monitor check: the netdiag command itself, as a child process with --json, against
// one server, so the monitor measures exactly as `netdiag speedtest` or `netdiag rpm` does and a
// fault in a test never takes the monitor down. A command that fails (the server down, a refused
// test) is a run that did not run, with the command's own reason; one the server's rate limit
// refused past the wait it asked for (exit 4, docs/command-line.md "Exit status") is a limited
// run: the server said "not now", which says nothing of the connection.
import { spawn } from 'node:child_process';
import { answerText } from '../../common/answer-text.js';
import type { DnsAnswer } from '../../common/dns-types.js';
import { RATE_LIMITED_EXIT } from '../api/rate-limit.js';
import type { MonitorCheck } from './monitor-config.js';

interface CheckOutcome {
  ok: boolean;
  /** The server's rate limit refused it (ok is false). */
  limited: boolean;
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
    case 'latency':
      return ['latency', ...(check.region === undefined ? [] : [check.region]), '--json', '--url', server];
    case 'dns':
      // After `--`, the name is never read as an option, whatever it starts with.
      return ['dns', '--json', '--url', server, '--', check.query ?? '', check.type];
    case 'families':
      return ['ip', '--both', '--json', '--url', server];
  }
}

const record = (value: unknown): Record<string, unknown> => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {});
const finite = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/**
 * The figures of a run, flat, by the names expectations use (expect.ts FIGURES), from the
 * command's JSON: a speed test's and an RPM test's top level as they are; the others' read out of
 * the API's shapes (docs/command-line.md).
 */
export function figuresOf(kind: MonitorCheck['run'], json: Record<string, unknown>): Record<string, unknown> {
  switch (kind) {
    case 'speedtest':
    case 'rpm':
      return json;
    case 'latency': {
      const regions = Array.isArray(json.regions) ? json.regions.map(record) : [];
      const edge = regions.map((r) => finite(r.edge_to_region_rtt_ms)).filter((v) => v !== null);
      // The client's own round trip (at the top, and in every row); the regions' worst is the one to watch.
      return { client_to_api_rtt_ms: finite(json.client_to_api_rtt_ms ?? regions[0]?.client_to_api_rtt_ms), edge_to_region_rtt_ms: edge.length === 0 ? null : Math.max(...edge) };
    }
    case 'dns': {
      const answers = Array.isArray(json.answers) ? json.answers.map(record) : [];
      // As `netdiag dns` shows each answer; a type this netdiag does not know shows empty.
      const data = answers.map((a) => (answerText(a as unknown as DnsAnswer) as string | undefined) ?? '').sort();
      return { response_code: typeof json.response_code === 'string' ? json.response_code : null, answers: data.join(', '), answer_count: answers.length };
    }
    case 'families': {
      const family = (name: string) => record(json[name]);
      // A time only for a family that answered: a refusal's or a deadline's time is no round trip.
      const ms = (name: string) => (family(name).state === 'ok' ? finite(family(name).ms) : null);
      return { ipv4: family('ipv4').state ?? null, ipv6: family('ipv6').state ?? null, ipv4_ms: ms('ipv4'), ipv6_ms: ms('ipv6') };
    }
  }
}

/**
 * Whether `netdiag dns --json` printed an answer: it exits 3 for NXDOMAIN and 1 for a resolver's
 * refusal or failure with the answer printed all the same (docs/command-line.md), and its
 * response_code is a figure a check expects, not a run that did not run.
 */
function answeredDns(stdout: string): boolean {
  try {
    return typeof record(JSON.parse(stdout)).response_code === 'string';
  } catch {
    return false;
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
    const done = (error: string | null, figures: Record<string, unknown> = {}, limited = false) => {
      resolve({ ok: error === null, limited, error, figures, durationMs: performance.now() - started });
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
      if (code !== 0 && !(check.run === 'dns' && answeredDns(stdout))) {
        done(reason ?? `exit ${String(code)}`, {}, code === RATE_LIMITED_EXIT);
        return;
      }
      try {
        const parsed = JSON.parse(stdout) as unknown;
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) done('the command printed no JSON object');
        else done(null, figuresOf(check.run, parsed as Record<string, unknown>));
      } catch {
        done('the command printed no JSON');
      }
    });
  });
}
