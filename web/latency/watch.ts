// The page's watch: once started, every interval the person picks (1-60 s) it asks this server
// (the browser's own round trip, by Resource Timing on an uncached /v1/health) and each region
// picked (the server's round trip to it, the probe route), spacing the region polls across the
// interval. A chart and a table per target, export as CSV or JSON. The polls live in this tab's
// memory only; nothing but the polls leaves the browser.
import type { Schemas } from '../../src/generated/openapi-types.js';
import { DEFAULT_PROBE_LIMIT, SERVER_TARGET as SERVER, probeBudget, summarize, type Poll, type PollStatus } from '../../src/common/series.js';
import { $, labelCells, text } from '../ui/dom.js';
import { formatMs } from '../speedtest/result-text.js';
import { num, t } from '../i18n/locale.js';
import { download, fileName, watchCsv, watchJson } from '../results/export.js';
import { drawWatchChart } from './watch-chart.js';
import type { WatchSummary } from './watch-history.js';

/**
 * The watch's state, one per page (made by setUpWatch): the regions' names, the probe limit this
 * server stated, the polls so far and the running watch. Passed to what needs it, never a
 * module-level variable another section could reach.
 */
interface WatchState {
  regionNames: ReadonlyMap<string, string>;
  /** This server's own, once a probe answer has stated it (RateLimit-Limit). */
  probeLimit: number | undefined;
  polls: Poll[];
  running: { stop: () => void } | undefined;
  /** The watch's start (ms since the epoch), interval and targets, for its summary. */
  session: { at: number; interval: number; targets: string[] } | undefined;
  /** The server polls waiting for their Resource Timing round trip, by URL. */
  timed: Map<string, (ms: number) => void>;
}

/**
 * Hands each server poll its round trip as Resource Timing reports it (an observer sees entries
 * even when the timeline's buffer is full, or while the speed test holds it).
 */
function observeTimings(timed: ReadonlyMap<string, (ms: number) => void>): void {
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries() as PerformanceResourceTiming[]) {
      const done = timed.get(entry.name);
      if (done !== undefined && entry.responseStart > 0) done(entry.responseStart - entry.requestStart);
    }
  }).observe({ type: 'resource' });
}

async function pollServer(timed: Map<string, (ms: number) => void>, n: number, deadlineMs: number): Promise<Poll> {
  const at = Date.now();
  const url = new URL(`/v1/health?watch=${String(at)}-${String(n)}`, location.href).href;
  const timing = new Promise<number | undefined>((resolve) => {
    timed.set(url, resolve);
    setTimeout(() => {
      resolve(undefined);
    }, deadlineMs + 1000);
  });
  const started = performance.now();
  try {
    const res = await fetch(url, { cache: 'no-store', signal: AbortSignal.timeout(deadlineMs) });
    const headersAt = performance.now();
    await res.arrayBuffer();
    if (!res.ok) return { at, target: SERVER, rtt_ms: null, status: res.status === 429 ? 'limited' : 'failed' };
    // Resource Timing's request-to-first-byte, or the time to the headers when it is not reported.
    const rtt = (await timing) ?? headersAt - started;
    return { at, target: SERVER, rtt_ms: Math.round(rtt * 1000) / 1000, status: 'ok' };
  } catch {
    return { at, target: SERVER, rtt_ms: null, status: 'failed' };
  } finally {
    timed.delete(url);
  }
}

async function pollRegion(region: string, deadlineMs: number, noteLimit: (limit: number) => void): Promise<Poll> {
  const at = Date.now();
  try {
    const res = await fetch(`/v1/latency/regions/${encodeURIComponent(region)}/probe`, { headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(deadlineMs) });
    const limit = Number(res.headers.get('ratelimit-limit'));
    if (limit > 0) noteLimit(limit);
    const body = (await res.json()) as { data?: Schemas['LatencyProbeData'] };
    // A 429 is the service refusing the rate: shown as limited, never as a failure or loss.
    const status: PollStatus = res.status === 429 ? 'limited' : res.ok && body.data !== undefined ? 'ok' : 'failed';
    return { at, target: region, rtt_ms: status === 'ok' ? (body.data?.edge_to_region_rtt_ms ?? null) : null, status };
  } catch {
    return { at, target: region, rtt_ms: null, status: 'failed' };
  }
}

const chosenRegions = (): string[] => [...document.querySelectorAll<HTMLInputElement>('#watch-regions input:checked')].map((i) => i.value);
const chosenInterval = (): number => Math.min(60, Math.max(1, Math.round(Number($<HTMLInputElement>('#watch-interval').value) || 5)));

/** Says whether the regions and interval chosen fit the probe limit, and what would. */
function showBudget(state: WatchState): void {
  const { probeLimit } = state;
  const regions = chosenRegions().length;
  const interval = chosenInterval();
  const limit = probeLimit ?? DEFAULT_PROBE_LIMIT;
  const theirs = probeLimit === undefined ? t('watch.budget-default', { limit: num(DEFAULT_PROBE_LIMIT) }) : t('watch.budget-server', { limit: num(probeLimit) });
  const { perMinute, fits, leastSeconds } = probeBudget(regions, interval, limit);
  const line = $('#watch-budget');
  line.dataset.fits = String(fits);
  const seconds = (s: number) => t('unit.s', { value: num(s) });
  if (regions === 0) text('#watch-budget', t('watch.only-server'));
  else if (fits) text('#watch-budget', t('watch.budget-fits', { perMinute: num(Math.round(perMinute)), theirs }));
  else {
    const counted = regions === 1 ? t('watch.regions-one') : t('watch.regions-many', { count: num(regions) });
    text('#watch-budget', t('watch.budget-over', { regions: counted, interval: seconds(interval), perMinute: num(Math.round(perMinute)), theirs, least: seconds(leastSeconds) }));
  }
}

const cell = (value: string) => {
  const td = document.createElement('td');
  td.textContent = value;
  return td;
};
/**
 * A round trip as the history keeps it: to the microsecond. The table shows the same value, so
 * the two never round one figure apart: one run of the page's watch suite showed a p95 of 2.8 ms
 * in the table and 2.9 in the history, a figure just under 2.85 kept as 2.850 and rounded again.
 */
const keptMs = (v: number) => Math.round(v * 1000) / 1000;
const msOr = (v: number | null) => (v === null ? '–' : formatMs(keptMs(v)));

/** What a target is called in the table and over its chart: the same words in both. */
const targetLabel = (state: WatchState, target: string): string => (target === SERVER ? t('watch.you-server') : t('watch.server-region', { region: state.regionNames.get(target) ?? target }));

function render(state: WatchState, targets: string[]): void {
  const { polls } = state;
  const body = $<HTMLTableElement>('#watch-table').tBodies[0];
  body?.replaceChildren(
    ...targets.map((target) => {
      const s = summarize(polls.filter((p) => p.target === target));
      const row = document.createElement('tr');
      row.dataset.target = target;
      row.append(cell(targetLabel(state, target)), cell(msOr(s.last)), cell(msOr(s.min)), cell(msOr(s.median)), cell(msOr(s.p95)), cell(msOr(s.jitter)), cell(t('watch.of', { failed: num(s.failed), polls: num(s.polls) })), cell(num(s.limited)));
      return row;
    }),
  );
  labelCells($<HTMLTableElement>('#watch-table'));
  for (const target of targets) {
    const svg = document.querySelector<SVGSVGElement>(`#watch-charts svg[data-target="${target}"]`);
    if (svg !== null) drawWatchChart(svg, targetLabel(state, target), polls.filter((p) => p.target === target));
  }
}

function charts(state: WatchState, targets: string[]): void {
  $('#watch-charts').replaceChildren(
    ...targets.map((target) => {
      const figure = document.createElement('figure');
      const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
      svg.dataset.target = target;
      svg.setAttribute('role', 'img');
      svg.classList.add('watch-chart');
      const caption = document.createElement('figcaption');
      caption.textContent = targetLabel(state, target);
      figure.append(caption, svg);
      return figure;
    }),
  );
}

function start(state: WatchState, noteLimit: (limit: number) => void): void {
  const regions = chosenRegions();
  const interval = chosenInterval();
  const targets = [SERVER, ...regions];
  state.polls = [];
  state.session = { at: Date.now(), interval, targets };
  $('#watch-keep').hidden = true;
  charts(state, targets);
  $('#watch-table').hidden = false;
  $('#watch-results').hidden = false;
  $<HTMLButtonElement>('#watch-start').hidden = true;
  $<HTMLButtonElement>('#watch-stop').hidden = false;
  text('#watch-status', t('watch.watching', { interval: t('unit.s', { value: num(interval) }) }));
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const deadline = Math.min(interval * 1000, 10_000);
  const began = performance.now();
  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, Math.max(0, ms));
    timers.add(timer);
  };
  // A poll in flight when the watch stops is still recorded: it was made, and the server saw it.
  const record = (poll: Promise<Poll>) =>
    void poll.then((p) => {
      state.polls.push(p);
      render(state, targets);
    });
  const round = (n: number) => {
    record(pollServer(state.timed, n, deadline));
    // The regions' polls spread across the interval, never a burst at its start.
    regions.forEach((region, i) => {
      later(((i + 1) * interval * 1000) / (regions.length + 1), () => {
        record(pollRegion(region, deadline, noteLimit));
      });
    });
    // Scheduled from the start, so rounds do not drift by the time each took.
    later(began + (n + 1) * interval * 1000 - performance.now(), () => {
      round(n + 1);
    });
  };
  state.running = {
    stop: () => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
  round(0);
}

function stop(state: WatchState): void {
  state.running?.stop();
  state.running = undefined;
  $<HTMLButtonElement>('#watch-start').hidden = false;
  $<HTMLButtonElement>('#watch-stop').hidden = true;
  text('#watch-status', t('watch.stopped', { count: num(state.polls.length) }));
  const keep = $<HTMLButtonElement>('#watch-keep');
  keep.hidden = state.polls.length === 0;
  keep.disabled = false;
  keep.textContent = t('watch.keep');
}

/** The stopped watch in a few figures a target, as the history keeps it (web/latency/watch-history.ts). */
function summary(state: WatchState): WatchSummary | undefined {
  const session = state.session;
  if (session === undefined || state.polls.length === 0) return undefined;
  const last = Math.max(...state.polls.map((p) => p.at));
  const round = (v: number | null) => (v === null ? null : keptMs(v));
  return {
    at: session.at,
    interval_s: session.interval,
    duration_s: Math.max(0, Math.round((last - session.at) / 1000)),
    targets: session.targets.map((target) => {
      const s = summarize(state.polls.filter((p) => p.target === target));
      return { label: targetLabel(state, target), polls: s.polls, failed: s.failed, limited: s.limited, median_ms: round(s.median), p95_ms: round(s.p95), jitter_ms: round(s.jitter) };
    }),
  };
}

/** What the rest of the page may tell the watch. */
export interface Watch {
  /** A probe answer's `RateLimit-Limit`, from the page's regional section. */
  noteProbeLimit(limit: number): void;
}

/** Wires the watch's form; `available` are the regions with a probe (the page asks for the list once). */
export function setUpWatch(available: readonly Schemas['RegionsResponse']['data']['regions'][number][], keep: (summary: WatchSummary) => void): Watch {
  const state: WatchState = { regionNames: new Map(available.map((r) => [r.id, r.name])), probeLimit: undefined, polls: [], running: undefined, session: undefined, timed: new Map() };
  observeTimings(state.timed);
  const budget = () => {
    showBudget(state);
  };
  const noteLimit = (limit: number) => {
    if (limit === state.probeLimit) return;
    state.probeLimit = limit;
    budget();
  };
  const box = $('#watch-regions');
  box.hidden = available.length === 0;
  box.append(
    ...available.map((region) => {
      const label = document.createElement('label');
      const input = document.createElement('input');
      input.type = 'checkbox';
      input.value = region.id;
      input.addEventListener('change', budget);
      label.append(input, ` ${region.name}`);
      return label;
    }),
  );
  $('#watch-interval').addEventListener('input', budget);
  budget();
  $<HTMLFormElement>('#watch-form').addEventListener('submit', (event) => {
    event.preventDefault();
    if (state.running === undefined) start(state, noteLimit);
  });
  $('#watch-stop').addEventListener('click', () => {
    stop(state);
  });
  // Only when asked: the polls stay in the tab; a summary goes to the history this browser keeps.
  $<HTMLButtonElement>('#watch-keep').addEventListener('click', (event) => {
    const kept = summary(state);
    if (kept === undefined) return;
    keep(kept);
    const button = event.currentTarget as HTMLButtonElement;
    button.disabled = true;
    button.textContent = t('watch.kept');
  });
  $('#watch-export-csv').addEventListener('click', () => {
    download(fileName('watch', Date.now(), 'csv'), 'text/csv', watchCsv(state.polls));
  });
  $('#watch-export-json').addEventListener('click', () => {
    download(fileName('watch', Date.now(), 'json'), 'application/json', watchJson(state.polls));
  });
  return { noteProbeLimit: noteLimit };
}
