// The acceptance matrix of issue 48, shared by test/timed/link-matrix.test.ts (one round, every
// check an assertion) and bench/shaped-link.mjs (`npm run bench:shaped`, several rounds, the checks
// printed as errors). Each cell is a shape of the link of test/support/shaped-link.ts, measured
// by the truth (test/support/link-truth.ts: bulk transfers timed every 100 ms, ping), by
// `netdiag speedtest`'s default test and by the page's default test in Chromium, in turn.
//
// Paths and the browser come in as arguments (the bench runs this file bundled elsewhere), and it
// imports only Node's modules, types, the pure rules of src/common/speedtest/ (to check the page's
// headline against what it exported) and the truth.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { bufferbloat } from '../../src/common/speedtest/bufferbloat.js';
import { sharedBps, sharedMs } from '../../src/common/speedtest/share.js';
import { measureDirection, PROFILES, type ByteCount, type RoundTrip } from '../../src/common/speedtest/working.js';
import type { CliReport } from './cli-report.js';
import type { Carried, ClientWindow, PingedLoad } from './link-carried.js';
import { median, type LinkTruth } from './link-truth.js';
import type { DirectionShape, ShapedLink } from './shaped-link.js';

export interface Cell {
  /** A short name, in the test's title (for `-t`) and in `--only`. */
  name: string;
  /** Each direction's shape; undefined for the unshaped veth path. */
  shape: { down: DirectionShape; up: DirectionShape } | undefined;
  kind: 'plain' | 'boosted' | 'unshaped';
}

const plain = (rate: number, queueMs: number): Cell => ({ name: `plain-${String(rate)}-q${String(queueMs)}`, shape: { down: { rate, queueMs }, up: { rate, queueMs } }, kind: 'plain' });
const boosted = (rate: number, peak: number, burst: number): Cell => {
  const each = { rate, queueMs: 20, burst, peak };
  return { name: `boosted-${String(rate)}-${String(peak)}`, shape: { down: each, up: each }, kind: 'boosted' };
};

/**
 * The matrix, in the order it runs: one link, reshaped from cell to cell (`tc qdisc replace`),
 * never rebuilt; the unshaped path last.
 */
export const CELLS: readonly Cell[] = [
  plain(5, 5),
  plain(5, 300),
  plain(20, 5),
  plain(20, 300),
  plain(100, 5),
  plain(100, 300),
  plain(200, 5),
  plain(200, 300),
  // A DSL-like line: 50 down with a 20 ms queue, 5 up with a 200 ms one.
  { name: 'asym-50-5', shape: { down: { rate: 50, queueMs: 20 }, up: { rate: 5, queueMs: 200 } }, kind: 'plain' },
  boosted(20, 40, 4_000_000),
  boosted(100, 200, 20_000_000),
  { name: 'unshaped', shape: undefined, kind: 'unshaped' },
];

export function applyCell(link: ShapedLink, cell: Cell): void {
  if (cell.shape === undefined) link.unshape();
  else link.shapeEach(cell.shape);
}

export const describeCell = (cell: Cell): string => {
  if (cell.shape === undefined) return 'unshaped veth path';
  const side = (s: DirectionShape) => `${String(s.rate)} Mbit/s, ${String(s.queueMs)} ms queue${s.peak === undefined ? '' : `, ${String((s.burst ?? 0) / 1e6)} MB at ${String(s.peak)}`}`;
  const { down, up } = cell.shape;
  return JSON.stringify(down) === JSON.stringify(up) ? side(down) : `down ${side(down)}; up ${side(up)}`;
};

/**
 * How close a client must come. ISSUE_BOUNDS are issue 48's acceptance, which the benchmark
 * reports against (`npm run bench:shaped`): rates within 5% of the truth on plain links, 10% on
 * boosted ones, ten runs each on the unshaped path within 1.3 times of each other. SUITE_BOUNDS
 * are what the timed suite holds in one round, no second try: loss-based TCP fills these links
 * differently from one run to the next (four CUBIC flows on a 5 ms queue at 100 Mbit/s moved
 * 88 to 95 Mbit/s in the truth's own repeats; on a 300 ms queue their recovery from slow start
 * took seconds in some runs and not others), and the unshaped path's rate is two busy cores
 * scheduling three processes; the benchmark gives the figures run by run (docs/benchmarks.md).
 * Within one run that path's rate, counted on the router, swings between about 2 and 20 Gbit/s a
 * second or more at a time (the CLI's ten downloads read 3 184-22 290 Mbit/s in one CI round), so
 * no client's ten runs agree within a bound the machine keeps: the suite holds each unshaped run
 * to what the router counted in that run's own measured window, and prints the spread.
 */
export interface Bounds {
  plainShare: number;
  boostedShare: number;
  /** On the unshaped path: each rate against what the router counted in that run's own measured window. */
  carriedShare: number;
  /** Largest over smallest of the unshaped runs' rates; printed, and judged only when set. */
  spread?: number;
}
export const ISSUE_BOUNDS: Bounds = { plainShare: 0.05, boostedShare: 0.1, carriedShare: 0.05, spread: 1.3 };
export const SUITE_BOUNDS: Bounds = { plainShare: 0.25, boostedShare: 0.25, carriedShare: 0.15 };

/** Every default test (CLI and page) ends within this. */
export const MAX_TEST_MS = 25_000;
/** The measured window is at least this long (the default test's window, working.ts PROFILES.full). */
export const MIN_WINDOW_MS = 5_000;

export type CliRun = { ok: true; report: CliReport; wallMs: number } | { ok: false; error: string; wallMs: number };

/** `netdiag speedtest`'s default test against `base`, as a user runs it, timed by the wall clock too. */
export async function runCliTest(cli: string, base: string): Promise<CliRun> {
  const started = Date.now();
  const child = spawn(process.execPath, [cli, 'speedtest', '--mode', 'full', '--json', '--no-analytics', '--no-packet-loss', '--url', base, '--timeout', '30'], { env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(timer);
  const wallMs = Date.now() - started;
  if (code !== 0) return { ok: false, error: `exit ${String(code)}: ${stderr.trim().slice(0, 500)}`, wallMs };
  try {
    return { ok: true, report: JSON.parse(stdout) as CliReport, wallMs };
  } catch (err) {
    return { ok: false, error: `not JSON (${String(err)}): ${stdout.slice(0, 200)}`, wallMs };
  }
}

/** What the page's Export JSON wrote for a direction (snake_case or camelCase points both read). */
interface ExportedDirection {
  progress?: unknown[];
  round_trips?: unknown[];
  end_ms?: number;
  window_ms?: unknown;
}
export interface PageExport {
  measured?: { download?: ExportedDirection | null; upload?: ExportedDirection | null };
}

export interface PageResult {
  /** bit/s, as data-value. */
  downBps: number | null;
  upBps: number | null;
  downBurst: { peakBps: number; bytes: number } | null;
  upBurst: { peakBps: number; bytes: number } | null;
  latencyMs: number | null;
  /** The bufferbloat figure's data-value (ms added under load) and the grade shown. */
  bufferbloatMs: number | null;
  grade: string;
  /** What "Latency under load" shows, if the page shows it. */
  loadedText: string | null;
  /** From the click on Start to "Done.". */
  ms: number;
  /** Each change of the live rate, as the DOM showed it. */
  live: { at: number; direction: string; bps: number }[];
  exported: PageExport;
}

export type PageRun = { ok: true; result: PageResult } | { ok: false; error: string; ms: number; log: string[] };

/** The page's default test in a fresh Chromium context: its figures as it shows them and as it exports them. */
export async function runPageTest(browser: Browser, base: string, scratch: string): Promise<PageRun> {
  const context = await browser.newContext({ acceptDownloads: true });
  const page = await context.newPage();
  const log: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') log.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('requestfailed', (request) => log.push(`request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText ?? ''}`));
  // Every change of the live rate, as it appeared in the DOM.
  await page.addInitScript(() => {
    const seen: { at: number; direction: string; bps: number }[] = [];
    (window as unknown as { live: typeof seen }).live = seen;
    document.addEventListener('DOMContentLoaded', () => {
      const rate = document.querySelector<HTMLElement>('#speed-live-rate');
      if (rate === null) return;
      new MutationObserver(() => {
        if (rate.dataset.bps !== undefined) seen.push({ at: performance.now(), direction: rate.dataset.direction ?? '', bps: Number(rate.dataset.bps) });
      }).observe(rate, { attributes: true, attributeFilter: ['data-bps', 'data-direction'] });
    });
  });
  let clicked = Date.now();
  try {
    await page.goto(`${base}/`);
    await page.waitForSelector('#speed-start:not([disabled])');
    // The modes arrive with the configuration, after the button is drawn: read the default once they are there.
    await page.waitForSelector('#speed-mode option', { state: 'attached' });
    const mode = await page.inputValue('#speed-mode');
    if (mode !== 'full') return { ok: false, error: `the default mode is ${mode}, not full`, ms: 0, log };
    clicked = Date.now();
    await page.click('#speed-start');
    await page.locator('#speed-status', { hasText: /^(Done\.|The test did not finish\.)$/ }).waitFor({ timeout: 120_000 });
    const ms = Date.now() - clicked;
    if ((await page.textContent('#speed-status')) !== 'Done.') return { ok: false, error: (await page.textContent('#speed-error')) ?? '', ms, log };
    const attr = (metric: string, name: string) => page.getAttribute(`#speed-results [data-metric="${metric}"]`, name).then((v) => (v === null ? null : Number(v)));
    const burst = async (metric: string) => {
      const peak = await attr(metric, 'data-burst-peak');
      return peak === null ? null : { peakBps: peak, bytes: (await attr(metric, 'data-burst-bytes')) ?? 0 };
    };
    const loaded = page.locator('#speed-results [data-metric="loaded"] .value');
    const [file] = await Promise.all([page.waitForEvent('download'), page.click('#speed-export-json')]);
    const exportPath = join(scratch, `export-${String(Date.now())}.json`);
    await file.saveAs(exportPath);
    return {
      ok: true,
      result: {
        downBps: await attr('download', 'data-value'),
        upBps: await attr('upload', 'data-value'),
        downBurst: await burst('download'),
        upBurst: await burst('upload'),
        latencyMs: await attr('latency', 'data-value'),
        bufferbloatMs: await attr('bufferbloat', 'data-value'),
        grade: ((await page.textContent('#speed-results [data-metric="bufferbloat"] .value')) ?? '').trim().split(' ')[0] ?? '',
        loadedText: (await loaded.count()) > 0 ? await loaded.first().textContent() : null,
        ms,
        live: await page.evaluate(() => (window as unknown as { live: { at: number; direction: string; bps: number }[] }).live),
        exported: JSON.parse(readFileSync(exportPath, 'utf8')) as PageExport,
      },
    };
  } catch (err) {
    return { ok: false, error: String(err), ms: Date.now() - clicked, log };
  } finally {
    await context.close();
  }
}

/** A point of the export's progress or round trips, whichever spelling the page used: {at_ms|atMs, bytes|ms} or [at, value]. */
function point(p: unknown, value: 'bytes' | 'ms'): { atMs: number; v: number } | undefined {
  if (Array.isArray(p)) return { atMs: Number(p[0]), v: Number(p[1]) };
  if (typeof p !== 'object' || p === null) return undefined;
  const o = p as Record<string, unknown>;
  return { atMs: Number(o.at_ms ?? o.atMs), v: Number(o[value]) };
}

/** A [start, end] window, ms, from the export's `window_ms` ([start, end] or {start_ms, end_ms}). */
function windowOf(w: unknown): [number, number] | undefined {
  if (Array.isArray(w) && w.length === 2) return [Number(w[0]), Number(w[1])];
  if (typeof w === 'object' && w !== null) {
    const o = w as Record<string, unknown>;
    const start = Number(o.start_ms ?? o.startMs ?? o.start);
    const end = Number(o.end_ms ?? o.endMs ?? o.end);
    if (Number.isFinite(start) && Number.isFinite(end)) return [start, end];
  }
  return undefined;
}

/** Each direction's measured window as the CLI reported it (`measured.*.window_s`), [start, end] ms from the direction's start. */
function cliSpans(r: CliReport): (ClientWindow | undefined)[] {
  return (['download', 'upload'] as const).map((d) => {
    const w = r.measured[d]?.window_s;
    return w === undefined ? undefined : [w[0] * 1000, w[1] * 1000];
  });
}

/** Each direction's measured window as the page exported it (`window_ms`), ms from the direction's start. */
const pageSpans = (p: PageResult): (ClientWindow | undefined)[] => (['download', 'upload'] as const).map((d) => windowOf(p.exported.measured?.[d]?.window_ms));

/** measureDirection (src/common/speedtest/working.ts) over what the page exported for a direction. */
export function exportedMeasure(d: ExportedDirection | null | undefined): ReturnType<typeof measureDirection> | undefined {
  if (d?.progress === undefined || d.end_ms === undefined) return undefined;
  const progress: ByteCount[] = d.progress.map((p) => point(p, 'bytes')).filter((p) => p !== undefined).map((p) => ({ atMs: p.atMs, bytes: p.v }));
  const roundTrips: RoundTrip[] = (d.round_trips ?? []).map((p) => point(p, 'ms')).filter((p) => p !== undefined).map((p) => ({ atMs: p.atMs, ms: p.v }));
  return measureDirection(progress, roundTrips, d.end_ms, PROFILES.full);
}

/** What a cell's clients read, for the table and the closing note. */
export interface CellFigures {
  cli: { down: number | null; up: number | null; loadedDown: number | null; loadedUp: number | null; idle: number | null; grade: string | null; bursts: string; durationMs: number | null; wallMs: number; windowsS: string; error?: string };
  page: { down: number | null; up: number | null; loadedDown: number | null; loadedUp: number | null; idle: number | null; grade: string | null; bursts: string; ms: number; windowsS: string; live: string; error?: string };
}

const mbps = (bps: number | null) => (bps === null ? null : bps / 1e6);
const f1 = (v: number | null | undefined) => (v === null || v === undefined ? 'null' : v.toFixed(1));
const burstText = (b: { peakMbps: number; bytes: number } | null) => (b === null ? 'none' : `${b.peakMbps.toFixed(1)} Mbit/s ${(b.bytes / 1e6).toFixed(2)} MB`);
const carriedText = (c: Carried | undefined, beside: Beside | undefined) => (c === undefined ? '' : ` (the link's fastest second ${c.downPeakMbps.toFixed(1)} / ${c.upPeakMbps.toFixed(1)}; ping beside ${f1(beside?.download?.loadedMs)} / ${f1(beside?.upload?.loadedMs)} ms)`);

/** Ping beside a client's own load each way, over its windows (link-carried.ts). */
interface Beside {
  download: PingedLoad | undefined;
  upload: PingedLoad | undefined;
}
const besideOf = (c: Carried | undefined, windows: readonly (ClientWindow | undefined)[]): Beside | undefined => (c === undefined ? undefined : { download: c.pingedIn('download', windows[0]), upload: c.pingedIn('upload', windows[1]) });

/** The truth's grade: bufferbloat.ts on the idle ping median and the worse direction's loaded ping median. */
/** The bufferbloat grade's band edges, ms added (src/common/speedtest/bufferbloat.ts, Waveform's scale). */
const GRADE_EDGES_MS = [5, 30, 60, 200, 400];

/** The latency the truth's worse direction adds under load, ms. */
function gradeIncrease(truth: LinkTruth): number | undefined {
  const down = truth.download.loadedMs;
  const up = truth.upload.loadedMs;
  const loaded = down === undefined && up === undefined ? undefined : Math.max(down ?? -Infinity, up ?? -Infinity);
  return bufferbloat(truth.idleMs, loaded)?.increaseMs;
}

export function truthGrade(truth: LinkTruth): string | undefined {
  const down = truth.download.loadedMs;
  const up = truth.upload.loadedMs;
  const loaded = down === undefined && up === undefined ? undefined : Math.max(down ?? -Infinity, up ?? -Infinity);
  return bufferbloat(truth.idleMs, loaded)?.grade;
}

export const truthText = (t: LinkTruth): string =>
  `truth ${t.download.sustainedMbps.toFixed(1)} / ${t.upload.sustainedMbps.toFixed(1)} Mbit/s (peaks ${t.download.peakMbps.toFixed(1)} / ${t.upload.peakMbps.toFixed(1)}, above sustained ${(t.download.burstBytes / 1e6).toFixed(2)} / ${(t.upload.burstBytes / 1e6).toFixed(2)} MB), ` +
  `ping idle ${f1(t.idleMs)} ms, loaded ${f1(t.download.loadedMs)} down (${String(t.download.pings.answered)}/${String(t.download.pings.sent)}) / ${f1(t.upload.loadedMs)} up (${String(t.upload.pings.answered)}/${String(t.upload.pings.sent)}) ms, grade ${String(truthGrade(t))}`;

/** The live readings of a direction's last second: their median, bit/s, and how many there were. */
export function lastSecondLive(live: PageResult['live'], direction: 'download' | 'upload'): { median: number | undefined; count: number } {
  const seen = live.filter((l) => l.direction === direction);
  const end = seen.at(-1)?.at ?? 0;
  const last = seen.filter((l) => l.at >= end - 1000).map((l) => l.bps);
  return { median: median(last), count: last.length };
}

/** A client's figures for the checks both share (judgeCell). */
interface Reading {
  client: 'CLI' | 'page';
  down: number | null;
  up: number | null;
  bursts: { down: { peakMbps: number; bytes: number } | null; up: { peakMbps: number; bytes: number } | null };
  loadedDown: number | null;
  loadedUp: number | null;
  grade: string | null;
  /** Each direction's measured window, ms. */
  windows: (number | undefined)[];
  /** Each direction's measured window, [start, end] ms from the direction's start. */
  spans: (ClientWindow | undefined)[];
  /** What the link carried in this client's own run, when it was counted: a burst's peak is held to it. */
  carried: Carried | undefined;
  /** Ping beside this client's own load, when it was counted: the loaded latency is held to it. */
  beside: Beside | undefined;
}

/**
 * How much of each bound a run used: the reading's distance from its reference over the distance
 * the bound allows (1 is at the bound, over 1 a miss), the largest per kind of check, with the
 * reading that used it. Printed with each cell, so the spread of many runs gives each bound's
 * margin (docs/testing.md, "Timed").
 */
export type BoundsUsed = Record<string, { used: number; what: string }>;

/** Records `used` under `kind` when it is the largest so far. */
function noteUse(into: BoundsUsed, kind: string, used: number, what: string): void {
  if (!Number.isFinite(used)) return;
  const before = into[kind];
  if (before === undefined || used > before.used) into[kind] = { used, what };
}

/** The bounds used, one line: `kind 0.42 (what)` each, largest first. */
export const boundsUsedText = (used: BoundsUsed): string =>
  Object.entries(used)
    .sort(([, a], [, b]) => b.used - a.used)
    .map(([kind, u]) => `${kind} ${u.used.toFixed(2)} (${u.what})`)
    .join(', ');

/**
 * The checks one cell's run must pass: each a description of a miss, none when it passed.
 * `carried`, when given, is what the link carried in each client's own run (link-carried.ts): a
 * burst's peak is held to the fastest second the link gave that run rather than the truth's, and
 * the loaded latency to ping beside that run's load rather than beside the truth's.
 */
export function judgeCell(cell: Cell, truth: LinkTruth, cliRun: CliRun, pageRun: PageRun, bounds: Bounds, carried: { cli?: Carried; page?: Carried } = {}): { misses: string[]; figures: CellFigures; used: BoundsUsed; notHeld: string[] } {
  const misses: string[] = [];
  const used: BoundsUsed = {};
  /** Figures printed and not held, where a lossy queue makes them chance (docs/testing.md, "Timed"). */
  const notHeld: string[] = [];
  const miss = (ok: boolean, text: string) => {
    if (!ok) misses.push(text);
  };
  const share = cell.kind === 'boosted' ? bounds.boostedShare : bounds.plainShare;
  /** Within `s` of `target`; what the reading used of that is noted under `kind`, with `what`. */
  const near = (value: number | null | undefined, target: number, s: number, kind?: string, what?: string) => {
    if (value === null || value === undefined) return false;
    if (kind !== undefined) noteUse(used, kind, Math.abs(value - target) / (target * s), what ?? kind);
    return Math.abs(value - target) <= target * s;
  };
  const pct = (value: number | null | undefined, target: number) => (value === null || value === undefined ? 'null' : `${value.toFixed(1)} (${value >= target ? '+' : ''}${((100 * (value - target)) / target).toFixed(1)}%)`);
  // Loaded latency: within a fifth or 10 ms of ping's median, whichever is wider.
  const nearMs = (value: number | null | undefined, target: number | undefined, what: string) => {
    if (value === null || value === undefined || target === undefined) return false;
    noteUse(used, 'loaded latency', Math.abs(value - target) / Math.max(10, 0.2 * target), what);
    return Math.abs(value - target) <= Math.max(10, 0.2 * target);
  };
  // On the unshaped path there is no queue to measure: ping's round trips there are tens of µs,
  // and what an HTTP round trip adds under load is two busy cores scheduling Node (the server, the
  // client, the load), not the link. A latency held to sub-millisecond noise would test the
  // machine, so the latency and grade checks stand down there only when the truth is that noise.
  const subMs = cell.kind === 'unshaped' && [truth.idleMs, truth.download.loadedMs, truth.upload.loadedMs].every((v) => v !== undefined && v < 1);
  // Where the queue drops many of ping's packets (a 5 ms queue at 5 Mbit/s holds four frames; half
  // the pings beside a bulk upload went unanswered), ping's median counts only the answered, while
  // a TCP round trip whose request was dropped is sent again after a retransmission timeout
  // (about 200 ms) and counts that: the latency a request there really meets, which ping cannot
  // say. There the client may read more than ping, never less, and the grade is not compared.
  const lossy = (d: PingedLoad) => d.pings.answered < 0.9 * d.pings.sent;
  const nearOrLossy = (value: number | null | undefined, d: PingedLoad, what: string) => {
    if (!lossy(d)) return nearMs(value, d.loadedMs, what);
    if (value === null || value === undefined || d.loadedMs === undefined) return false;
    noteUse(used, 'loaded latency', Math.max(0, d.loadedMs - value) / Math.max(10, 0.2 * d.loadedMs), `${what}, lossy: at least`);
    return value >= d.loadedMs - Math.max(10, 0.2 * d.loadedMs);
  };
  // The grade is compared where the truth's added latency is farther from a band's edge than the
  // latency's own tolerance (20% or 10 ms): at 5.0 ms added, a client reading 4.5 ms is within
  // it and grades A+ where the truth grades A.
  const increase = gradeIncrease(truth);
  const nearEdge = increase !== undefined && GRADE_EDGES_MS.some((edge) => Math.abs(increase - edge) <= Math.max(10, 0.2 * edge));
  const gradeChecked = !lossy(truth.download) && !lossy(truth.upload) && !nearEdge;
  const grade = truthGrade(truth);
  const expectBurst = cell.kind === 'boosted';
  const rateChecked = cell.kind !== 'unshaped';

  /** The checks both clients share: rates, bursts, loaded latency and grade, windows. */
  const judgeReading = (x: Reading): void => {
    const { client } = x;
    if (rateChecked) {
      miss(near(x.down, truth.download.sustainedMbps, share, 'rate', `${client} download`), `${client} download ${pct(x.down, truth.download.sustainedMbps)} against ${truth.download.sustainedMbps.toFixed(1)}`);
      miss(near(x.up, truth.upload.sustainedMbps, share, 'rate', `${client} upload`), `${client} upload ${pct(x.up, truth.upload.sustainedMbps)} against ${truth.upload.sustainedMbps.toFixed(1)}`);
    } else {
      const judged = carriedMisses(client, [x.down, x.up], x.spans, x.carried, bounds.carriedShare);
      misses.push(...judged.misses);
      judged.gaps.forEach((gap, i) => {
        if (gap !== undefined) noteUse(used, "rate against the router's count", Math.abs(gap) / bounds.carriedShare, `${client} ${i === 0 ? 'download' : 'upload'}`);
      });
    }
    for (const [name, b, t, linkPeak] of [['download', x.bursts.down, truth.download, x.carried?.downPeakMbps], ['upload', x.bursts.up, truth.upload, x.carried?.upPeakMbps]] as const) {
      miss((b !== null) === expectBurst, `${client} ${name} burst ${burstText(b)} on a ${cell.kind} link`);
      if (expectBurst && b !== null) {
        const peak = linkPeak ?? t.peakMbps;
        const against = linkPeak === undefined ? "the truth's" : 'the link carried in this run';
        miss(near(b.peakMbps, peak, 0.15, 'burst peak', `${client} ${name}`), `${client} ${name} burst peak ${b.peakMbps.toFixed(1)} against ${peak.toFixed(1)} ${against} (15%)`);
        miss(near(b.bytes, t.burstBytes, 0.3, 'burst size', `${client} ${name}`), `${client} ${name} burst ${(b.bytes / 1e6).toFixed(2)} MB against ${(t.burstBytes / 1e6).toFixed(2)} (30%)`);
      }
    }
    if (!subMs) {
      // Held to ping beside this client's own load where it was counted (link-carried.ts: a deep
      // queue fills to a depth that differs from load to load), else to ping beside the truth's.
      const loadedAgainst = (direction: 'download' | 'upload', value: number | null) => {
        const beside = x.beside === undefined ? truth[direction] : x.beside[direction];
        const name = x.beside === undefined ? 'ping beside the truth' : 'ping beside it';
        if (beside === undefined) miss(false, `${client} ${direction}: the router saw no load that way to read ping beside`);
        // Half of ping lost beside the load: a round trip whose request was dropped waits out
        // doubling retransmission timeouts, and the page's two in flight may both outlast the window.
        else if (value === null && lossy(beside)) notHeld.push(`${client} ${direction} loaded latency: none answered within the window (${String(beside.pings.answered)}/${String(beside.pings.sent)} pings answered beside it)`);
        else miss(nearOrLossy(value, beside, `${client} ${direction}`), `${client} ${direction} loaded latency ${f1(value)} ms against ${name} ${f1(beside.loadedMs)} (${String(beside.pings.answered)}/${String(beside.pings.sent)} answered)`);
      };
      loadedAgainst('download', x.loadedDown);
      loadedAgainst('upload', x.loadedUp);
      if (gradeChecked) miss(x.grade === grade, `${client} grade ${String(x.grade)} against the truth's ${String(grade)}`);
    }
    x.windows.forEach((w, i) => {
      miss(w !== undefined && w >= MIN_WINDOW_MS, `${client} ${i === 0 ? 'download' : 'upload'} measured window ${w === undefined ? 'missing' : `${String(w)} ms`} (at least ${String(MIN_WINDOW_MS)})`);
    });
  };

  const cliFig: CellFigures['cli'] = { down: null, up: null, loadedDown: null, loadedUp: null, idle: null, grade: null, bursts: '', durationMs: null, wallMs: cliRun.wallMs, windowsS: '' };
  if (!cliRun.ok) {
    misses.push(`CLI failed: ${cliRun.error}`);
    cliFig.error = cliRun.error;
  } else {
    const r = cliRun.report;
    const bursts = { down: r.download_burst === null ? null : { peakMbps: r.download_burst.peak_mbps, bytes: r.download_burst.bytes }, up: r.upload_burst === null ? null : { peakMbps: r.upload_burst.peak_mbps, bytes: r.upload_burst.bytes } };
    const spans = cliSpans(r);
    const windows = spans.map((w) => (w === undefined ? undefined : w[1] - w[0]));
    const beside = besideOf(carried.cli, spans);
    Object.assign(cliFig, { down: r.download_mbps, up: r.upload_mbps, loadedDown: r.download_loaded_latency_ms, loadedUp: r.upload_loaded_latency_ms, idle: r.latency_ms, grade: r.bufferbloat_grade, bursts: `${burstText(bursts.down)} / ${burstText(bursts.up)}${carriedText(carried.cli, beside)}`, durationMs: r.duration_ms, windowsS: windows.map((w) => (w === undefined ? '-' : (w / 1000).toFixed(1))).join(' / ') });
    judgeReading({ client: 'CLI', down: r.download_mbps, up: r.upload_mbps, bursts, loadedDown: r.download_loaded_latency_ms, loadedUp: r.upload_loaded_latency_ms, grade: r.bufferbloat_grade, windows, spans, carried: carried.cli, beside });
    noteUse(used, 'test duration', Math.max(r.duration_ms, cliRun.wallMs) / MAX_TEST_MS, 'CLI');
    miss(r.duration_ms <= MAX_TEST_MS, `CLI duration_ms ${String(r.duration_ms)} over ${String(MAX_TEST_MS)}`);
    miss(cliRun.wallMs <= MAX_TEST_MS, `CLI wall time ${String(cliRun.wallMs)} ms over ${String(MAX_TEST_MS)}`);
  }

  const pageFig: CellFigures['page'] = { down: null, up: null, loadedDown: null, loadedUp: null, idle: null, grade: null, bursts: '', ms: pageRun.ok ? pageRun.result.ms : pageRun.ms, windowsS: '', live: '' };
  if (!pageRun.ok) {
    misses.push(`page failed: ${pageRun.error}${pageRun.log.length > 0 ? `\n  ${pageRun.log.slice(0, 20).join('\n  ')}` : ''}`);
    pageFig.error = pageRun.error;
  } else {
    const p = pageRun.result;
    const down = mbps(p.downBps);
    const up = mbps(p.upBps);
    const bursts = { down: p.downBurst === null ? null : { peakMbps: p.downBurst.peakBps / 1e6, bytes: p.downBurst.bytes }, up: p.upBurst === null ? null : { peakMbps: p.upBurst.peakBps / 1e6, bytes: p.upBurst.bytes } };
    const measured = { download: exportedMeasure(p.exported.measured?.download), upload: exportedMeasure(p.exported.measured?.upload) };
    const spans = pageSpans(p);
    const windows = spans.map((w) => (w === undefined ? undefined : w[1] - w[0]));
    const beside = besideOf(carried.page, spans);
    const live = (['download', 'upload'] as const).map((d) => ({ direction: d, ...lastSecondLive(p.live, d), final: d === 'download' ? p.downBps : p.upBps }));
    Object.assign(pageFig, {
      down, up, loadedDown: measured.download?.loaded?.ms ?? null, loadedUp: measured.upload?.loaded?.ms ?? null, idle: p.latencyMs, grade: p.grade, bursts: `${burstText(bursts.down)} / ${burstText(bursts.up)}${carriedText(carried.page, beside)}`,
      windowsS: windows.map((w) => (w === undefined ? '-' : (w / 1000).toFixed(1))).join(' / '),
      live: live.map((l) => `${f1(mbps(l.median ?? null))} (${String(l.count)})`).join(' / '),
    });
    judgeReading({ client: 'page', down, up, bursts, loadedDown: pageFig.loadedDown, loadedUp: pageFig.loadedUp, grade: p.grade, windows, spans, carried: carried.page, beside });
    noteUse(used, 'test duration', p.ms / MAX_TEST_MS, 'page');
    miss(p.ms <= MAX_TEST_MS, `page took ${String(p.ms)} ms from the click to "Done." (at most ${String(MAX_TEST_MS)})`);
    // The live line in each direction's last second: the median of its readings within a tenth of the final figure.
    for (const l of live) {
      // On a lossy queue an upload stream sits out retransmission timeouts past STALLED_MS and its
      // upload in flight is counted only once answered (working.ts receivedProgress): the live
      // line reads the others alone meanwhile, by chance as much as a fifth under the final.
      const pinged = beside?.[l.direction] ?? truth[l.direction];
      if (l.direction === 'upload' && lossy(pinged)) {
        notHeld.push(`page live upload in its last second ${f1(mbps(l.median ?? null))} Mbit/s (${String(l.count)} readings) against the final ${f1(mbps(l.final))} (${String(pinged.pings.answered)}/${String(pinged.pings.sent)} pings answered beside the load)`);
        continue;
      }
      if (l.median !== undefined && l.final !== null && l.final > 0) noteUse(used, 'live rate', Math.abs(l.median - l.final) / (0.1 * l.final), `page ${l.direction}`);
      miss(l.count > 0 && l.median !== undefined && l.final !== null && Math.abs(l.median - l.final) <= 0.1 * l.final, `page live ${l.direction} in its last second ${f1(mbps(l.median ?? null))} Mbit/s (${String(l.count)} readings) against the final ${f1(mbps(l.final))}`);
    }
    // The headline is measureDirection over the progress and round trips the page exported.
    miss(measured.download !== undefined && measured.upload !== undefined, 'the page export has no measured.download/upload progress and end_ms');
    if (measured.download !== undefined && measured.upload !== undefined) {
      const expected = {
        download: measured.download.sustained === undefined ? null : sharedBps(measured.download.sustained.bps),
        upload: measured.upload.sustained === undefined ? null : sharedBps(measured.upload.sustained.bps),
        downloadBurst: measured.download.burst !== undefined,
        uploadBurst: measured.upload.burst !== undefined,
      };
      const shown = { download: p.downBps, upload: p.upBps, downloadBurst: p.downBurst !== null, uploadBurst: p.upBurst !== null };
      miss(JSON.stringify(expected) === JSON.stringify(shown), `page headline ${JSON.stringify(shown)} is not measureDirection over its export ${JSON.stringify(expected)}`);
      const loadedDown = measured.download.loaded === undefined ? undefined : sharedMs(measured.download.loaded.ms);
      const loadedUp = measured.upload.loaded === undefined ? undefined : sharedMs(measured.upload.loaded.ms);
      const worse = loadedDown === undefined && loadedUp === undefined ? undefined : Math.max(loadedDown ?? -Infinity, loadedUp ?? -Infinity);
      const increase = bufferbloat(p.latencyMs ?? undefined, worse)?.increaseMs;
      miss(increase === undefined ? p.bufferbloatMs === null : p.bufferbloatMs !== null && Math.abs(p.bufferbloatMs - increase) <= 0.001, `page bufferbloat ${String(p.bufferbloatMs)} ms is not its idle latency against the worse exported loaded median (${String(increase)})`);
    }
  }
  return { misses, figures: { cli: cliFig, page: pageFig }, used, notHeld };
}

/**
 * An unshaped run's rates against what the router counted that way in the run's own measured
 * window (link-carried.ts carriedIn): within `share` each way. The path has no rate of its own
 * but what the machine gives it at the moment, so the reference is the same bytes the client
 * counted, seen from the router.
 */
function carriedMisses(client: string, figures: readonly [number | null, number | null], spans: readonly (ClientWindow | undefined)[], carried: Carried | undefined, share: number): { misses: string[]; gaps: (number | undefined)[] } {
  if (carried === undefined) return { misses: [`${client}: the router did not count this run, so its rates have nothing to be held to`], gaps: [] };
  const misses: string[] = [];
  /** Each direction's figure against the router's count, as a fraction of the count (undefined: no figure or count). */
  const gaps: (number | undefined)[] = [];
  (['download', 'upload'] as const).forEach((direction, i) => {
    const figure = figures[i] ?? null;
    const span = spans[i];
    const routed = span === undefined ? undefined : carried.carriedIn(direction, span);
    gaps.push(figure !== null && routed !== undefined ? (figure - routed) / routed : undefined);
    if (figure === null || routed === undefined || Math.abs(figure - routed) > share * routed) {
      const off = figure === null || routed === undefined ? '' : ` (${figure >= routed ? '+' : ''}${((100 * (figure - routed)) / routed).toFixed(1)}%, at most ${String(100 * share)}%)`;
      misses.push(`${client} ${direction} ${f1(figure)} Mbit/s against ${f1(routed ?? null)} the router counted in its window ${JSON.stringify(span)}${off}`);
    }
  });
  return { misses, gaps };
}

/** What the router counted in each repeat run (the same order as the runs). */
export interface RepeatsCarried {
  cli: (Carried | undefined)[];
  page: (Carried | undefined)[];
}

/**
 * The unshaped path's repeat runs: each run's rates within bounds.carriedShare of what the router
 * counted in its own window, no burst, every window at least 5 s; each set's largest over smallest
 * printed, and held to bounds.spread where set.
 */
export function judgeRepeats(cli: CliRun[], page: PageRun[], bounds: Bounds, carried: RepeatsCarried): { misses: string[]; summary: string } {
  const misses: string[] = [];
  const spread = (values: (number | null)[]) => {
    const v = values.filter((x): x is number => x !== null && x > 0);
    return v.length === 0 ? Infinity : Math.max(...v) / Math.min(...v);
  };
  const cliOk = cli.filter((r) => r.ok);
  const pageOk = page.filter((r) => r.ok);
  cli.forEach((r, i) => {
    if (!r.ok) misses.push(`CLI run ${String(i + 1)} failed: ${r.error}`);
  });
  page.forEach((r, i) => {
    if (!r.ok) misses.push(`page run ${String(i + 1)} failed: ${r.error}`);
  });
  const spreads = {
    cliDown: spread(cliOk.map((r) => r.report.download_mbps)),
    cliUp: spread(cliOk.map((r) => r.report.upload_mbps)),
    pageDown: spread(pageOk.map((r) => r.result.downBps)),
    pageUp: spread(pageOk.map((r) => r.result.upBps)),
  };
  // Each run's rates against the router's count in its window, as fractions (for the summary).
  const gaps = { cli: [] as number[], page: [] as number[] };
  const { spread: most } = bounds;
  if (most !== undefined) for (const [name, s] of Object.entries(spreads)) if (!(s <= most)) misses.push(`${name}: largest over smallest ${s.toFixed(2)} (at most ${String(most)})`);
  /** A run's rates against the router's count: its misses kept, its gaps added to the client's. */
  const held = (client: string, figures: readonly [number | null, number | null], spans: readonly (ClientWindow | undefined)[], count: Carried | undefined, into: number[]) => {
    const judged = carriedMisses(client, figures, spans, count, bounds.carriedShare);
    misses.push(...judged.misses);
    into.push(...judged.gaps.filter((gap) => gap !== undefined));
  };
  /** A run's windows, each at least MIN_WINDOW_MS. */
  const whole = (client: string, spans: readonly (ClientWindow | undefined)[]) => {
    spans.forEach((w, i) => {
      if (w === undefined || w[1] - w[0] < MIN_WINDOW_MS) misses.push(`${client} ${i === 0 ? 'download' : 'upload'} window ${JSON.stringify(w)} ms`);
    });
  };
  cli.forEach((r, i) => {
    if (!r.ok) return;
    const m = r.report;
    const spans = cliSpans(m);
    held(`CLI run ${String(i + 1)}`, [m.download_mbps, m.upload_mbps], spans, carried.cli[i], gaps.cli);
    if (m.download_burst !== null || m.upload_burst !== null) misses.push(`CLI run ${String(i + 1)} named a burst: ${JSON.stringify([m.download_burst, m.upload_burst])}`);
    whole(`CLI run ${String(i + 1)}`, spans);
    if (m.duration_ms > MAX_TEST_MS || r.wallMs > MAX_TEST_MS) misses.push(`CLI run ${String(i + 1)} took ${String(m.duration_ms)} ms (wall ${String(r.wallMs)})`);
  });
  page.forEach((r, i) => {
    if (!r.ok) return;
    const p = r.result;
    const spans = pageSpans(p);
    held(`page run ${String(i + 1)}`, [mbps(p.downBps), mbps(p.upBps)], spans, carried.page[i], gaps.page);
    if (p.downBurst !== null || p.upBurst !== null) misses.push(`page run ${String(i + 1)} named a burst`);
    whole(`page run ${String(i + 1)}`, spans);
    for (const d of ['download', 'upload'] as const) {
      const l = lastSecondLive(p.live, d);
      const final = d === 'download' ? p.downBps : p.upBps;
      if (l.median === undefined || final === null || Math.abs(l.median - final) > 0.1 * final) misses.push(`page run ${String(i + 1)} live ${d} in its last second ${f1(mbps(l.median ?? null))} against ${f1(mbps(final))}`);
    }
    if (p.ms > MAX_TEST_MS) misses.push(`page run ${String(i + 1)} took ${String(p.ms)} ms`);
  });
  const list = (values: (number | null)[]) => values.map((v) => f1(v)).join(', ');
  const range = (g: number[]) => (g.length === 0 ? 'none' : `${(100 * Math.min(...g)).toFixed(1)}% to ${(100 * Math.max(...g)).toFixed(1)}%`);
  const summary =
    `against the router's count in each run's window: CLI ${range(gaps.cli)}, page ${range(gaps.page)}; ` +
    `CLI down ${list(cliOk.map((r) => r.report.download_mbps))} (spread ${spreads.cliDown.toFixed(2)}), up ${list(cliOk.map((r) => r.report.upload_mbps))} (spread ${spreads.cliUp.toFixed(2)}), durations ${cliOk.map((r) => (r.report.duration_ms / 1000).toFixed(1)).join(', ')} s; ` +
    `page down ${list(pageOk.map((r) => mbps(r.result.downBps)))} (spread ${spreads.pageDown.toFixed(2)}), up ${list(pageOk.map((r) => mbps(r.result.upBps)))} (spread ${spreads.pageUp.toFixed(2)}), durations ${pageOk.map((r) => (r.result.ms / 1000).toFixed(1)).join(', ')} s`;
  return { misses, summary };
}

/** One line of a cell's figures for the closing note. */
export function cellLine(cell: Cell, truth: LinkTruth, figures: CellFigures): string {
  const c = figures.cli;
  const p = figures.page;
  return (
    `${cell.name} (${describeCell(cell)}): ${truthText(truth)}\n` +
    `  CLI ${c.error === undefined ? `${f1(c.down)} / ${f1(c.up)} Mbit/s, idle ${f1(c.idle)} ms, loaded ${f1(c.loadedDown)} / ${f1(c.loadedUp)} ms, grade ${String(c.grade)}, bursts ${c.bursts}, windows ${c.windowsS} s, duration_ms ${String(c.durationMs)}, wall ${String(c.wallMs)} ms` : `failed: ${c.error}`}\n` +
    `  page ${p.error === undefined ? `${f1(p.down)} / ${f1(p.up)} Mbit/s, idle ${f1(p.idle)} ms, loaded ${f1(p.loadedDown)} / ${f1(p.loadedUp)} ms (export), grade ${String(p.grade)}, bursts ${p.bursts}, windows ${p.windowsS} s, live last second ${p.live} Mbit/s, click to Done ${String(p.ms)} ms` : `failed after ${String(p.ms)} ms: ${p.error}`}\n`
  );
}
