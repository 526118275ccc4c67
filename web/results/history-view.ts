// "Your history": the results this browser kept (web/results/history.ts), as a table with a delete button
// each, a trend chart, export and import, and delete all. Nothing here makes a request: the
// history goes from this browser's storage to the screen or to a file the person saves.
import { historyFileCsv, historyFileJson } from '../../src/common/speedtest/history-file.js';
import type { SharedResult } from '../../src/common/speedtest/share.js';
import { bufferbloat, worseLoaded } from '../../src/common/speedtest/bufferbloat.js';
import { $, labelCells } from '../ui/dom.js';
import { download, fileName } from './export.js';
import { drawTrend } from './history-chart.js';
import { HISTORY_KEY, mergeHistory, parseHistory, readHistory, resultKey, writeHistory, type HistoryStorage } from './history.js';
import { formatMbps, formatMs, setupParts } from '../speedtest/result-text.js';
import { dateAndTime, dateTime, num, t } from '../i18n/locale.js';
import type { MessageKey } from '../i18n/en.js';
import { mergeWatches, readWatches, WATCH_HISTORY_KEY, writeWatches, type WatchSummary } from '../latency/watch-history.js';

/** The page's storage, or why there is none (a browser or a setting may refuse it). */
function storage(): HistoryStorage | string {
  try {
    return window.localStorage;
  } catch (err) {
    return t('history.storage-refused', { reason: err instanceof Error ? err.message : String(err) });
  }
}

/** Says what went wrong with the history, or clears the message. */
function problem(message: string | undefined): void {
  const element = $('#history-error');
  element.textContent = message ?? '';
  element.hidden = message === undefined;
}

/** A cell's value: one text, or units the cell may wrap between, never inside (each `separator` apart). */
type CellValue = string | { units: readonly string[]; separator: string };

const cell = (value: CellValue): HTMLTableCellElement => {
  const td = document.createElement('td');
  if (typeof value === 'string') {
    td.textContent = value;
    return td;
  }
  // One box for the units, so a row folded into a card (page.css) keeps them together as one value.
  const units = document.createElement('span');
  units.className = 'units';
  value.units.forEach((text, i) => {
    const unit = document.createElement('span');
    unit.textContent = text;
    units.append(...(i === 0 ? [] : [value.separator]), unit);
  });
  td.append(units);
  return td;
};

/** When a result was measured, its date and time each a unit. */
function whenCell(at: number): CellValue {
  const { date, between, time } = dateAndTime(at, { dateStyle: 'short', timeStyle: 'short' });
  return time === '' ? date : { units: [date, time], separator: between };
}

/**
 * One kept result as its table row shows it (when, mode with the server, streams and family, download, upload, idle latency, the
 * worse latency under load, the bufferbloat grade from those two, the responsiveness estimate),
 * and the delete button's label.
 */
export function resultRowView(r: SharedResult): { cells: CellValue[]; deleteLabel: string } {
  const loaded = worseLoaded(r.loadedDownMs, r.loadedUpMs);
  const grade = bufferbloat(r.latencyMs, loaded)?.grade;
  return {
    cells: [
      whenCell(r.at),
      // The mode, then what the test ran against and with, when the result says it.
      { units: [t(r.mode === 'light' ? 'speed.mode-light' : 'speed.mode-full'), ...setupParts(r)], separator: t('list.separator') },
      formatMbps(r.downloadBps),
      formatMbps(r.uploadBps),
      r.latencyMs === undefined ? '–' : formatMs(r.latencyMs),
      loaded === undefined ? '–' : formatMs(loaded),
      grade ?? '–',
      r.rpm === undefined ? '–' : num(r.rpm),
    ],
    deleteLabel: t('history.delete-result-of', { when: dateTime(r.at, { dateStyle: 'full', timeStyle: 'medium' }) }),
  };
}

/** The kept results in the table and the chart, newest first in the table. */
function show(results: readonly SharedResult[]): void {
  const table = $<HTMLTableElement>('#history-table');
  const figure = $('#history-chart-figure');
  const empty = results.length === 0;
  table.hidden = empty;
  figure.hidden = results.length < 2;
  status({ results: results.length });
  table.tBodies[0]?.replaceChildren(
    ...[...results].reverse().map((r) => {
      const view = resultRowView(r);
      const row = document.createElement('tr');
      row.dataset.at = String(r.at);
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.className = 'secondary icon';
      remove.textContent = '✕';
      remove.title = t('history.delete-result');
      remove.setAttribute('aria-label', view.deleteLabel);
      remove.addEventListener('click', () => {
        const key = resultKey(r);
        update((kept) => kept.filter((k) => resultKey(k) !== key));
      });
      const action = document.createElement('td');
      action.append(remove);
      row.append(...view.cells.map(cell), action);
      return row;
    }),
  );
  labelCells(table);
  // Shown before drawing, so the chart takes its own width rather than a hidden figure's zero.
  if (!figure.hidden) drawTrend($('#history-chart') as unknown as SVGSVGElement, results);
  $('#history-key-loaded').hidden = !results.some((r) => worseLoaded(r.loadedDownMs, r.loadedUpMs) !== undefined);
}

/** How much is kept, in words; the counts ride on the status line so each list updates its own. */
function status(counts: { results?: number; watches?: number }): void {
  const line = $('#history-status');
  if (counts.results !== undefined) line.dataset.results = String(counts.results);
  if (counts.watches !== undefined) line.dataset.watches = String(counts.watches);
  const results = Number(line.dataset.results ?? 0);
  const watches = Number(line.dataset.watches ?? 0);
  $('#history-actions').hidden = results + watches === 0;
  if (results + watches === 0) {
    line.textContent = t('history.empty');
    return;
  }
  const resultsText = results === 1 ? t('history.results-one') : t('history.results-many', { count: num(results) });
  const watchesText = watches === 1 ? t('history.watches-one') : t('history.watches-many', { count: num(watches) });
  line.textContent = watches === 0 ? t('history.kept-results', { results: resultsText }) : t('history.kept-both', { results: resultsText, watches: watchesText });
}

const msText = (ms: number | null) => (ms === null ? '–' : formatMs(ms));

/** The kept watch summaries, newest first, each with its targets in one cell. */
function showWatches(watches: readonly WatchSummary[]): void {
  const table = $<HTMLTableElement>('#history-watches');
  table.hidden = watches.length === 0;
  status({ watches: watches.length });
  const when = (at: number) => dateTime(at, { dateStyle: 'short', timeStyle: 'short' });
  table.tBodies[0]?.replaceChildren(
    ...[...watches].reverse().map((w) => {
      const row = document.createElement('tr');
      row.dataset.at = String(w.at);
      const targets = w.targets
        .map((target) => {
          const figures = { label: target.label, median: msText(target.median_ms), p95: msText(target.p95_ms), failed: num(target.failed), polls: num(target.polls) };
          return target.limited === 0 ? t('history.watch-target', figures) : t('history.watch-target-limited', { ...figures, limited: num(target.limited) });
        })
        .join(t('families.separator'));
      const remove = document.createElement('button');
      remove.type = 'button';
      remove.className = 'secondary icon';
      remove.textContent = '✕';
      remove.title = t('history.delete-watch');
      remove.setAttribute('aria-label', t('history.delete-watch-of', { when: dateTime(w.at, { dateStyle: 'full', timeStyle: 'medium' }) }));
      remove.addEventListener('click', () => {
        updateWatches((kept) => kept.filter((k) => k.at !== w.at));
      });
      const action = document.createElement('td');
      action.append(remove);
      const targetsCell = cell(targets);
      targetsCell.className = 'wrap';
      row.append(cell(when(w.at)), cell(t('unit.s', { value: num(w.interval_s) })), cell(t('unit.min', { value: num(Math.round(w.duration_s / 60)) })), targetsCell, action);
      return row;
    }),
  );
  labelCells(table);
}

/** A list this browser keeps: how it is read, written and shown, and what its faults are called. */
interface KeptList<T> {
  read(store: HistoryStorage): { ok: true; items: T[] } | { ok: false; reason: string };
  write(store: HistoryStorage, items: T[]): void;
  show(items: T[]): void;
  /** The page after a read: `ok` false when what is stored could not be read. */
  readable(ok: boolean): void;
  said: { cannotKeep: MessageKey; unreadable: MessageKey; notSaved: MessageKey };
}

/** Reads a kept list, changes it with `change`, writes and shows it; any failure is said, nothing dropped. */
function updateKept<T>(list: KeptList<T>, change: (kept: T[]) => T[]): boolean {
  const store = storage();
  if (typeof store === 'string') {
    problem(t(list.said.cannotKeep, { reason: store }));
    return false;
  }
  const read = list.read(store);
  list.readable(read.ok);
  if (!read.ok) {
    // Left as it is: overwriting what could not be read would lose it. "Delete all" stays
    // offered, the one way out that the person chooses.
    problem(t(list.said.unreadable, { reason: read.reason }));
    return false;
  }
  const next = change(read.items);
  try {
    list.write(store, next);
  } catch (err) {
    problem(t(list.said.notSaved, { reason: err instanceof Error ? err.message : String(err) }));
    return false;
  }
  list.show(next);
  return true;
}

const RESULTS: KeptList<SharedResult> = {
  read: (store) => {
    const read = readHistory(store);
    return read.ok ? { ok: true, items: read.results } : read;
  },
  write: writeHistory,
  show,
  readable: (ok) => {
    // Results that cannot be read cannot be exported either.
    if (!ok) $('#history-actions').hidden = false;
    $('#history-export-csv').hidden = !ok;
    $('#history-export-json').hidden = !ok;
  },
  said: { cannotKeep: 'history.cannot-keep', unreadable: 'history.unreadable', notSaved: 'history.not-saved' },
};

const WATCHES: KeptList<WatchSummary> = {
  read: (store) => {
    const read = readWatches(store);
    return read.ok ? { ok: true, items: read.watches } : read;
  },
  write: writeWatches,
  show: showWatches,
  readable: (ok) => {
    if (!ok) $('#history-actions').hidden = false;
  },
  said: { cannotKeep: 'history.cannot-keep-watches', unreadable: 'history.unreadable-watches', notSaved: 'history.watch-not-saved' },
};

/** Changes the kept results; a change that is kept clears what was said of the history before. */
function update(change: (kept: SharedResult[]) => SharedResult[]): void {
  if (updateKept(RESULTS, change)) problem(undefined);
}

/** Changes the kept watch summaries. */
function updateWatches(change: (kept: WatchSummary[]) => WatchSummary[]): void {
  updateKept(WATCHES, change);
}

/** Keeps a watch's summary (the watch's "Keep a summary" button). */
export function keepWatch(summary: WatchSummary): void {
  updateWatches((kept) => mergeWatches(kept, [summary]));
}

/** Adds a finished test's figures to the history (called by the speed test). */
export function keepResult(result: SharedResult): void {
  update((kept) => mergeHistory(kept, [result]));
}

export function setUpHistory(): void {
  update((kept) => kept);
  updateWatches((kept) => kept);
  // Export reads what is kept and writes nothing back; the buttons show only when the results
  // could be read (update hides them otherwise).
  const kept = (): { results: SharedResult[]; watches: WatchSummary[] } | undefined => {
    const store = storage();
    if (typeof store === 'string') return undefined;
    const results = readHistory(store);
    const watches = readWatches(store);
    return results.ok ? { results: results.results, watches: watches.ok ? watches.watches : [] } : undefined;
  };
  $('#history-export-csv').addEventListener('click', () => {
    const k = kept();
    if (k !== undefined) download(fileName('history', Date.now(), 'csv'), 'text/csv', historyFileCsv(k.results));
  });
  $('#history-export-json').addEventListener('click', () => {
    const k = kept();
    if (k !== undefined) download(fileName('history', Date.now(), 'json'), 'application/json', historyFileJson(k.results, k.watches));
  });
  $('#history-clear').addEventListener('click', () => {
    // Removed, not read and rewritten: this also clears a history that cannot be read.
    const store = storage();
    if (typeof store !== 'string') {
      store.removeItem(HISTORY_KEY);
      store.removeItem(WATCH_HISTORY_KEY);
    }
    update(() => []);
    updateWatches(() => []);
  });
  const input = $<HTMLInputElement>('#history-import');
  input.addEventListener('change', () => {
    const file = input.files?.[0];
    if (file === undefined) return;
    void file.text().then((contents) => {
      input.value = '';
      const parsed = parseHistory(contents);
      if (!parsed.ok) {
        problem(t('history.not-imported', { file: file.name, reason: parsed.reason }));
        return;
      }
      update((kept) => mergeHistory(kept, parsed.results));
      if (parsed.watches.length > 0) updateWatches((kept) => mergeWatches(kept, parsed.watches));
    });
  });
}
