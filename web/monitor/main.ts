// The monitor's page (docs/monitor.md, "The local page"): served by `netdiag monitor` on this
// machine, it reads the history once (/history.json) and shows each check's state at a glance, the
// speed tests over time with the page's own trend chart, and the runs as a table that folds into
// cards on a narrow screen, in the page's languages.
import { $, labelCells } from '../ui/dom.js';
import { drawTrend } from '../results/history-chart.js';
import { dateTime, num, t } from '../i18n/locale.js';
import { setUpLanguage } from '../i18n/page-text.js';
import { worseLoaded } from '../../src/common/speedtest/bufferbloat.js';
import type { SharedResult } from '../../src/common/speedtest/share.js';
import { shownFigures } from './figures.js';
import { showBudgets } from './budget.js';
import { setUpPauseControl } from './pause-control.js';
import { checkHistory, lastRunOf, measuredAgainst, speedSeries, stateOf, type CheckState, type MonitorHistory, type MonitorRun } from './monitor-history.js';

/** The most runs the table lists (newest first); the charts take every run read. */
const TABLE_ROWS = 500;

const when = (iso: string) => dateTime(Date.parse(iso), { dateStyle: 'medium', timeStyle: 'short' });
const shortWhen = (iso: string) => dateTime(Date.parse(iso), { dateStyle: 'short', timeStyle: 'short' });

/** "Download 91 Mbps, Upload 18 Mbps", each pair isolated by t() on a right-to-left page. */
const figuresText = (run: MonitorRun): string => shownFigures(run.figures).map(({ name, value }) => t('monitor.figure', { name, value })).join(t('monitor.figure-separator'));

const resultText = (run: MonitorRun): string => (run.ok ? figuresText(run) : t(run.outcome === 'limited' ? 'monitor.limited' : run.outcome === 'skipped' ? 'monitor.skipped' : 'monitor.failed', { reason: run.error ?? '' }));

/** A failed run is an error; a limited one is the server saying "not now", and a skipped one the monitor's own choice (paused): said quietly. */
const resultClass = (run: MonitorRun): string => (run.ok ? '' : run.outcome === 'limited' || run.outcome === 'skipped' ? 'limited' : 'error');

function stateText(state: CheckState, last: MonitorRun | undefined): string {
  switch (stateOf(state, last)) {
    case 'none':
      return t('monitor.state-none');
    case 'alerting':
      return t('monitor.state-alerting', { count: num(state.streak) });
    case 'breaching':
      return t('monitor.state-breaching', { count: num(state.streak) });
    case 'ok':
      return t('monitor.state-ok');
  }
}

/** "from 192.0.2.10": the local address a run was sent from (its check's `source:`, one uplink of several). */
function sourceLine(address: string, tag: 'p' | 'span'): HTMLElement {
  const line = document.createElement(tag);
  line.className = 'note source';
  line.textContent = t('monitor.from-source', { address });
  return line;
}

/** One card per check against a server: its name, server, state, last run and next. */
function showChecks(history: MonitorHistory): void {
  $('#monitor-checks').replaceChildren(
    ...history.checks.map((state) => {
      const last = lastRunOf(state, history.runs);
      const item = document.createElement('li');
      item.dataset.state = stateOf(state, last);
      const name = document.createElement('h3');
      name.textContent = state.check;
      name.dir = 'auto';
      // The last run's server: for `auto`, the one it chose (a card is the check, its server and its last run).
      const server = document.createElement('code');
      server.textContent = last === undefined ? state.server : measuredAgainst(last);
      server.dir = 'ltr';
      const status = document.createElement('p');
      status.className = 'state';
      status.textContent = stateText(state, last);
      const lines = [status];
      if (last !== undefined) {
        const lastLine = document.createElement('p');
        lastLine.textContent = t('monitor.last-run', { when: when(last.started_at) });
        const figures = document.createElement('p');
        figures.className = `figures ${resultClass(last)}`.trim();
        figures.textContent = resultText(last);
        lines.push(lastLine, figures);
      }
      if (state.next_run_at !== null) {
        const next = document.createElement('p');
        next.className = 'note';
        next.textContent = t('monitor.next-run', { when: when(state.next_run_at) });
        lines.push(next);
      }
      const source = last === undefined || last.source_address === null ? [] : [sourceLine(last.source_address, 'p')];
      item.append(name, server, ...source, ...lines);
      return item;
    }),
  );
}

/** A key for each line the chart draws, its swatch in the line's colour (the main page's history has the same). */
function legend(results: readonly SharedResult[]): HTMLElement[] {
  const withLoaded = results.some((r) => worseLoaded(r.loadedDownMs, r.loadedUpMs) !== undefined);
  const keys: ['down' | 'up' | 'loaded', string][] = [
    ['down', t('speed.key-download')],
    ['up', t('speed.key-upload')],
    ...(withLoaded ? [['loaded', t('history.key-loaded')] as ['loaded', string]] : []),
  ];
  return keys.map(([cls, name]) => {
    const key = document.createElement('span');
    key.className = 'key';
    const swatch = document.createElement('span');
    swatch.className = `swatch ${cls}`;
    const label = document.createElement('span');
    label.textContent = name;
    key.append(swatch, label);
    return key;
  });
}

/** The page's trend chart for each check against a server that ran speed tests. */
function showCharts(history: MonitorHistory): void {
  const series = speedSeries(history.runs).filter((s) => s.results.length >= 2);
  $('#monitor-charts-section').hidden = series.length === 0;
  $('#monitor-charts').replaceChildren(
    ...series.map((s) => {
      const figure = document.createElement('figure');
      const caption = document.createElement('figcaption');
      caption.append(t('monitor.chart-caption', { check: s.check, server: s.server }), ...legend(s.results));
      const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
      svg.setAttribute('class', 'chart');
      svg.setAttribute('role', 'img');
      svg.setAttribute('aria-label', t('monitor.chart-label', { check: s.check, count: num(s.results.length) }));
      figure.append(caption, svg);
      // Drawn once in the document: the chart takes its width from the SVG's own box. The runs
      // come at the schedule's times, gaps and all: across by time, not one step a test.
      queueMicrotask(() => {
        drawTrend(svg, s.results, { byTime: true });
      });
      return figure;
    }),
  );
}

/** A cell of the runs' table, named by its column (`data-column`) for the narrow screen's card. */
function cell(column: string, text: string, dir?: 'ltr' | 'auto'): HTMLTableCellElement {
  const td = document.createElement('td');
  td.dataset.column = column;
  td.textContent = text;
  if (dir !== undefined) td.dir = dir;
  return td;
}

/** A run's server cell: what it measured against (ltr: a URL), and on a line of its own where it was sent from. */
function serverCell(run: MonitorRun): HTMLTableCellElement {
  const td = cell('server', '');
  // One child: the narrow screen's card lays a cell's label and its content side by side (web/page.css).
  const content = document.createElement('span');
  const server = document.createElement('span');
  server.className = 'server';
  server.dir = 'ltr';
  server.textContent = measuredAgainst(run);
  content.append(server);
  if (run.source_address !== null) content.append(document.createElement('br'), sourceLine(run.source_address, 'span'));
  td.append(content);
  return td;
}

/** The runs, newest first, at most TABLE_ROWS. */
function showRuns(history: MonitorHistory): void {
  const newest = history.runs.slice(-TABLE_ROWS).reverse();
  $('#monitor-runs-section').hidden = newest.length === 0;
  $('#monitor-shown').textContent = history.runs.length > TABLE_ROWS ? t('monitor.shown-some', { shown: num(TABLE_ROWS), count: num(history.runs.length), since: when(history.since) }) : t('monitor.shown-all', { count: num(history.runs.length), since: when(history.since) });
  const table = $<HTMLTableElement>('#monitor-runs');
  // One server (the usual case) is named on every card above: its column would only crowd the table,
  // unless it says more than the cards: the server each auto run chose, the source each run was sent from.
  table.classList.toggle('one-server', new Set(history.runs.map((r) => r.server)).size <= 1 && history.runs.every((r) => r.chosen === null && r.source_address === null));
  table.tBodies[0]?.replaceChildren(
    ...newest.map((run) => {
      const row = document.createElement('tr');
      row.dataset.ok = String(run.ok);
      const result = cell('result', resultText(run) + (run.source === 'import' ? ` (${t('monitor.imported')})` : ''));
      result.className = resultClass(run);
      row.append(cell('when', shortWhen(run.started_at)), cell('check', run.check, 'auto'), serverCell(run), result, cell('breaches', run.breaches.length === 0 ? '–' : run.breaches.join('; '), 'ltr'));
      return row;
    }),
  );
  labelCells(table);
}

async function load(): Promise<void> {
  const status = $('#monitor-status');
  const error = $('#monitor-error');
  try {
    const res = await fetch('/history.json', { cache: 'no-store' });
    if (!res.ok) throw new Error(t('monitor.answered', { status: String(res.status) }));
    const history = checkHistory(await res.json());
    if (typeof history === 'string') throw new Error(history);
    status.textContent = history.runs.length === 0 ? t('monitor.empty') : '';
    status.hidden = history.runs.length > 0;
    showChecks(history);
    showBudgets(history);
    showCharts(history);
    showRuns(history);
  } catch (err) {
    status.textContent = '';
    error.textContent = t('monitor.load-failed', { reason: err instanceof Error ? err.message : String(err) });
    error.hidden = false;
  }
}

document.addEventListener('DOMContentLoaded', () => {
  void setUpLanguage().then(() => Promise.all([load(), setUpPauseControl()]));
});
