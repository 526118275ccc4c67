// `netdiag watch`: the client as the monitor (the service keeps none). Every interval it asks,
// for each target, its round trip: this client's to the deployment (a GET /v1/health, whole
// answer on a warm connection) and the deployment's to each named region (the probe route).
// On a terminal a live table; piped or with --json one JSON object per poll per line. It ends
// after --count rounds or at Ctrl-C (a normal end), prints a summary, and exits 3 when a
// threshold was crossed (docs/command-line.md, "Exit status").
import { setTimeout as sleep } from 'node:timers/promises';
import type { Schemas } from '../../generated/openapi-types.js';
import { DEFAULT_PROBE_LIMIT, SERVER_TARGET, probeBudget, summarize, type Poll, type SeriesSummary } from '../../common/series.js';
import { ApiFailure, type Client } from '../api/client.js';
import { table, type Output } from '../terminal/output.js';
import { terminalJson, terminalText } from '../terminal/terminal-text.js';

interface WatchOptions {
  regions: string[];
  intervalSeconds: number;
  /** Rounds to make; undefined until Ctrl-C. */
  count: number | undefined;
  /** JSON lines instead of the live table (also when standard output is not a terminal). */
  lines: boolean;
  maxRttMs: number | undefined;
  maxLossPercent: number | undefined;
}

interface PollLine extends Poll {
  error?: string;
}

/** Exit status of a watch: 0, or 3 when a threshold was crossed. */
type WatchExit = 0 | 3;

const ms = (v: number | null) => (v === null ? '-' : `${v.toFixed(1)} ms`);

/** One poll of one target: never throws; a failure is a poll whose status says so. */
async function poll(client: Client, target: string): Promise<PollLine> {
  const at = Date.now();
  const started = performance.now();
  try {
    if (target === SERVER_TARGET) {
      await client.get('/v1/health');
      return { at, target, rtt_ms: round(performance.now() - started), status: 'ok' };
    }
    const data = await client.get<Schemas['LatencyProbeData']>(`/v1/latency/regions/${encodeURIComponent(target)}/probe`);
    return { at, target, rtt_ms: round(data.edge_to_region_rtt_ms), status: 'ok' };
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    // The service refused the rate, which says nothing of the path: limited, not lost.
    if (err instanceof ApiFailure && err.status === 429) return { at, target, rtt_ms: null, status: 'limited', error };
    return { at, target, rtt_ms: null, status: 'failed', error };
  }
}

const round = (v: number) => Math.round(v * 1000) / 1000;

/**
 * The regions named must exist and have a probe on this deployment; checked against its list
 * when it answers: those it does not know, those it has no probe for, and those it has.
 */
export async function unknownRegions(client: Client, regions: string[]): Promise<{ unknown: string[]; unprobed: string[]; available: string[]; known: string[] } | undefined> {
  if (regions.length === 0) return { unknown: [], unprobed: [], available: [], known: [] };
  try {
    const { regions: known } = await client.get<Schemas['RegionsResponse']['data']>('/v1/latency/regions');
    const byId = new Map<string, boolean>(known.map((r) => [r.id, r.available]));
    return {
      unknown: regions.filter((r) => !byId.has(r)),
      unprobed: regions.filter((r) => byId.get(r) === false),
      available: known.filter((r) => r.available).map((r) => r.id),
      known: known.map((r) => r.id),
    };
  } catch {
    // Nothing answers yet: the watch goes on, and each poll says what failed.
    return undefined;
  }
}

function summaryLines(targets: string[], polls: PollLine[]): string[] {
  return targets.map((target) => {
    const s = summarize(polls.filter((p) => p.target === target));
    const loss = s.lossPercent === null ? 'no answer either way' : `${s.lossPercent.toFixed(1)}% lost`;
    return `${target}: ${String(s.polls)} polls, ${String(s.ok)} answered, ${String(s.failed)} failed (${loss}), ${String(s.limited)} limited; min ${ms(s.min)}, median ${ms(s.median)}, p95 ${ms(s.p95)}, max ${ms(s.max)}, jitter ${ms(s.jitter)}`;
  });
}

function liveTable(out: Output, targets: string[], polls: PollLine[]): string {
  const row = (target: string, s: SeriesSummary) => [
    target,
    ms(s.last),
    ms(s.min),
    ms(s.median),
    ms(s.p95),
    ms(s.jitter),
    `${String(s.failed)}/${String(s.polls)}`,
    String(s.limited),
  ];
  return table(out, [['TARGET', 'LAST', 'MIN', 'MEDIAN', 'P95', 'JITTER', 'FAILED', 'LIMITED'], ...targets.map((t) => row(t, summarize(polls.filter((p) => p.target === t))))]);
}

/** What crossed a threshold, in words; empty when nothing did. */
function crossings(options: WatchOptions, targets: string[], polls: PollLine[]): string[] {
  const found: string[] = [];
  if (options.maxRttMs !== undefined) {
    const limit = options.maxRttMs;
    for (const target of targets) {
      const over = polls.filter((p) => p.target === target && p.status === 'ok' && p.rtt_ms !== null && p.rtt_ms > limit);
      if (over.length > 0) found.push(`${target}: ${String(over.length)} round trip${over.length === 1 ? '' : 's'} above --max-rtt ${String(limit)} ms (highest ${ms(Math.max(...over.map((p) => p.rtt_ms ?? 0)))})`);
    }
  }
  if (options.maxLossPercent !== undefined) {
    const limit = options.maxLossPercent;
    for (const target of targets) {
      const loss = summarize(polls.filter((p) => p.target === target)).lossPercent;
      if (loss !== null && loss > limit) found.push(`${target}: ${loss.toFixed(1)}% of polls failed, above --max-loss ${String(limit)}%`);
    }
  }
  return found;
}

export async function watchCommand(client: Client, out: Output, options: WatchOptions): Promise<WatchExit> {
  const targets = [SERVER_TARGET, ...options.regions];
  const budget = probeBudget(options.regions.length, options.intervalSeconds, DEFAULT_PROBE_LIMIT);
  if (!budget.fits) {
    process.stderr.write(
      `netdiag: ${String(options.regions.length)} region${options.regions.length === 1 ? '' : 's'} every ${String(options.intervalSeconds)} s is ${String(Math.round(budget.perMinute))} probe requests a minute; deployments allow ${String(DEFAULT_PROBE_LIMIT)} by default, so expect polls marked limited (an --interval of ${String(budget.leastSeconds)} s or more fits)\n`,
    );
  }
  const polls: PollLine[] = [];
  const stop = new AbortController();
  const onInterrupt = () => {
    stop.abort();
  };
  // Ctrl-C ends a watch normally: the summary is printed and the exit says what was seen.
  process.once('SIGINT', onInterrupt);
  const redraw = !options.lines;
  let drawnLines = 0;
  // One request first, not counted: the first poll would otherwise pay the connection's set-up.
  await client.get('/v1/health').catch(() => undefined);
  const started = Date.now();
  try {
    for (let n = 0; options.count === undefined || n < options.count; n++) {
      const due = started + n * options.intervalSeconds * 1000;
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait, undefined, { signal: stop.signal }).catch(() => undefined);
      if (stop.signal.aborted) break;
      const answers = await Promise.all(targets.map((t) => poll(client, t)));
      polls.push(...answers);
      if (redraw) {
        const text = liveTable(out, targets, polls);
        // Up over the last drawing and over it: the table stays in place on a terminal.
        process.stdout.write(`${drawnLines > 0 ? `\u001b[${String(drawnLines)}A\u001b[J` : ''}${text}\n`);
        drawnLines = text.split('\n').length;
      } else {
        for (const p of answers) process.stdout.write(`${terminalJson({ time: new Date(p.at).toISOString(), target: p.target, rtt_ms: p.rtt_ms, status: p.status, ...(p.error === undefined ? {} : { error: p.error }) })}\n`);
      }
    }
  } finally {
    process.removeListener('SIGINT', onInterrupt);
  }
  const crossed = crossings(options, targets, polls);
  // The summary goes with the table on a terminal; beside JSON lines it goes to standard error,
  // so a script reading standard output gets polls only.
  const write = (text: string) => (options.lines ? process.stderr : process.stdout).write(`${terminalText(text)}\n`);
  for (const line of summaryLines(targets, polls)) write(line);
  for (const line of crossed) write(`threshold crossed: ${line}`);
  return crossed.length > 0 ? 3 : 0;
}
