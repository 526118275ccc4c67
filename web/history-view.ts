// "Your history": the results this browser kept (web/history.ts), as a table with a delete button
// each, a trend chart, export and import, and delete all. Nothing here makes a request: the
// history goes from this browser's storage to the screen or to a file the person saves.
import type { SharedResult } from '../src/speedtest/share.js';
import { bufferbloat } from '../src/speedtest/bufferbloat.js';
import { $, text } from './dom.js';
import { download, fileName } from './export.js';
import { drawTrend } from './history-chart.js';
import { HISTORY_KEY, historyCsv, historyJson, mergeHistory, parseHistory, readHistory, resultKey, writeHistory, type HistoryStorage } from './history.js';
import { formatMbps, formatMs, worseLoaded } from './report.js';

/** The page's storage, or why there is none (a browser or a setting may refuse it). */
function storage(): HistoryStorage | string {
  try {
    return window.localStorage;
  } catch (err) {
    return `this browser refused its storage (${err instanceof Error ? err.message : String(err)})`;
  }
}

/** Says what went wrong with the history, or clears the message. */
function problem(message: string | undefined): void {
  const element = $('#history-error');
  element.textContent = message ?? '';
  element.hidden = message === undefined;
}

const cell = (value: string): HTMLTableCellElement => {
  const td = document.createElement('td');
  td.textContent = value;
  return td;
};

/** The kept results in the table and the chart, newest first in the table. */
function show(results: readonly SharedResult[]): void {
  const table = $<HTMLTableElement>('#history-table');
  const figure = $('#history-chart-figure');
  const empty = results.length === 0;
  table.hidden = empty;
  figure.hidden = results.length < 2;
  $('#history-actions').hidden = empty;
  text('#history-status', empty ? 'No results kept yet: each test you run here is added.' : `${String(results.length)} result${results.length === 1 ? '' : 's'} kept in this browser.`);
  const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'short' });
  const whenInFull = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'medium' });
  table.tBodies[0]?.replaceChildren(
    ...[...results].reverse().map((r) => {
      const row = document.createElement('tr');
      row.dataset.at = String(r.at);
      const loaded = worseLoaded(r.loadedDownMs, r.loadedUpMs);
      const grade = bufferbloat(r.latencyMs, loaded)?.grade;
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.className = 'secondary icon';
      remove.textContent = '✕';
      remove.title = 'Delete this result';
      remove.setAttribute('aria-label', `Delete the result of ${whenInFull.format(r.at)}`);
      remove.addEventListener('click', () => {
        const key = resultKey(r);
        update((kept) => kept.filter((k) => resultKey(k) !== key));
      });
      const action = document.createElement('td');
      action.append(remove);
      row.append(
        cell(when.format(r.at)),
        cell(r.mode),
        cell(formatMbps(r.downloadBps)),
        cell(formatMbps(r.uploadBps)),
        cell(r.latencyMs === undefined ? '–' : formatMs(r.latencyMs)),
        cell(loaded === undefined ? '–' : formatMs(loaded)),
        cell(grade ?? '–'),
        action,
      );
      return row;
    }),
  );
  // Shown before drawing, so the chart takes its own width rather than a hidden figure's zero.
  if (!figure.hidden) drawTrend($('#history-chart') as unknown as SVGSVGElement, results);
  $('#history-key-loaded').hidden = !results.some((r) => worseLoaded(r.loadedDownMs, r.loadedUpMs) !== undefined);
}

/** Reads the history, changes it with `change`, writes and shows it; any failure is said, nothing dropped. */
function update(change: (kept: SharedResult[]) => SharedResult[]): void {
  const store = storage();
  if (typeof store === 'string') {
    problem(`Results cannot be kept: ${store}.`);
    return;
  }
  const read = readHistory(store);
  if (!read.ok) {
    // Left as it is: overwriting what could not be read would lose it. "Delete all" stays
    // offered, the one way out that the person chooses.
    problem(`The history kept in this browser cannot be read (${read.reason}); it is left as it is, and nothing is added to it. "Delete all" removes it.`);
    $('#history-actions').hidden = false;
    $('#history-export-csv').hidden = true;
    $('#history-export-json').hidden = true;
    return;
  }
  $('#history-export-csv').hidden = false;
  $('#history-export-json').hidden = false;
  const next = change(read.results);
  try {
    writeHistory(store, next);
  } catch (err) {
    problem(`The history could not be saved: ${err instanceof Error ? err.message : String(err)}.`);
    return;
  }
  problem(undefined);
  show(next);
}

/** Adds a finished test's figures to the history (called by the speed test). */
export function keepResult(result: SharedResult): void {
  update((kept) => mergeHistory(kept, [result]));
}

export function setUpHistory(): void {
  update((kept) => kept);
  $('#history-export-csv').addEventListener('click', () => {
    update((kept) => {
      download(fileName('history', Date.now(), 'csv'), 'text/csv', historyCsv(kept));
      return kept;
    });
  });
  $('#history-export-json').addEventListener('click', () => {
    update((kept) => {
      download(fileName('history', Date.now(), 'json'), 'application/json', historyJson(kept));
      return kept;
    });
  });
  $('#history-clear').addEventListener('click', () => {
    // Removed, not read and rewritten: this also clears a history that cannot be read.
    const store = storage();
    if (typeof store !== 'string') store.removeItem(HISTORY_KEY);
    update(() => []);
  });
  const input = $<HTMLInputElement>('#history-import');
  input.addEventListener('change', () => {
    const file = input.files?.[0];
    if (file === undefined) return;
    void file.text().then((contents) => {
      input.value = '';
      const parsed = parseHistory(contents);
      if (!parsed.ok) {
        problem(`${file.name} was not imported: ${parsed.reason}.`);
        return;
      }
      update((kept) => mergeHistory(kept, parsed.results));
    });
  });
}
