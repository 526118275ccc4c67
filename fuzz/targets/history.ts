// Fuzz target: a history file a person imports into the page (parseHistory, web/results/history.ts), JSON
// or CSV as the page exports them, or any other file they pick. Its contract: a total function;
// `{ ok: false, reason }` names what is wrong; what it accepts holds only results the share codec
// would hand out (its bounds and precision, no address) and valid watch summaries, and exporting
// them again (historyFileJson, historyFileCsv) and importing that gives the same history back.
import { historyFileCsv, historyFileJson } from '../../src/common/speedtest/history-file.js';
import { parseHistory } from '../../web/results/history.js';
import { checkWatches } from '../../web/latency/watch-history.js';
import { check, json, total } from '../invariant.js';
import { checkSharedResult } from '../shared-result.js';

export function fuzz(data: Buffer): void {
  // The page reads the picked file as text (File.text(): UTF-8).
  const text = data.toString('utf8');
  const parsed = total('history/never-throws', () => parseHistory(text));
  if (!parsed.ok) {
    check(typeof parsed.reason === 'string' && parsed.reason !== '', 'history/refusal-says-why', () => JSON.stringify(parsed));
    return;
  }
  const { results, watches } = parsed;
  for (const result of results) {
    checkSharedResult(result, 'history/result-in-bounds', () => json(result));
    check(result.address === undefined, 'history/result-in-bounds', () => `an imported result carries an address: ${json(result)}`);
  }
  const rechecked = checkWatches(watches, 'watch');
  check(rechecked.ok && json(rechecked.watches) === json(watches), 'history/watches-valid', () => json(rechecked));

  // Exported again and imported, the same history (CSV carries the results only).
  const fromJson = parseHistory(historyFileJson(results, watches));
  check(fromJson.ok && json(fromJson.results) === json(results) && json(fromJson.watches) === json(watches), 'history/round-trip', () => `JSON export of ${json(parsed)} reads back as ${json(fromJson)}`);
  const fromCsv = parseHistory(historyFileCsv(results));
  check(fromCsv.ok && json(fromCsv.results) === json(results), 'history/round-trip', () => `CSV export of ${json(results)} reads back as ${json(fromCsv)}`);
}
