// The history the page keeps in the browser (web/results/history.ts): what it stores (no address), what
// it does with storage it cannot read (leaves it alone and says why), and export and import, which
// must give back the same results and refuse a file with a wrong one, naming it.
import { historyFileCsv, historyFileJson } from '../../src/common/speedtest/history-file.js';
import { describe, expect, it } from 'vitest';
import type { SharedResult } from '../../src/common/speedtest/share.js';
import { HISTORY_KEY, HISTORY_MAX, mergeHistory, parseHistory, readHistory, writeHistory, type HistoryStorage } from '../../web/results/history.js';
import { mergeWatches, readWatches, WATCH_HISTORY_KEY, WATCH_HISTORY_MAX, writeWatches } from '../../web/latency/watch-history.js';

/** Web Storage over a Map: the part of localStorage the history uses. */
function memoryStorage(): HistoryStorage & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return {
    map,
    getItem: (key) => map.get(key) ?? null,
    setItem: (key, value) => {
      map.set(key, value);
    },
    removeItem: (key) => {
      map.delete(key);
    },
  };
}

const at = (minute: number) => Date.UTC(2026, 10, 26, 9, minute, 0);
const FULL: SharedResult = { at: at(0), mode: 'full', downloadBps: 95_123_456, uploadBps: 19_500_000, latencyMs: 12.5, jitterMs: 1.25, loadedDownMs: 40.125, loadedUpMs: 31, lossPercent: 0.5 };
const LIGHT: SharedResult = { at: at(5), mode: 'light', downloadBps: 18_000_000, uploadBps: 9_000_000, latencyMs: 20 };

describe('the history kept in the browser', () => {
  it('starts empty, and keeps what is written, oldest first', () => {
    const storage = memoryStorage();
    expect(readHistory(storage)).toEqual({ ok: true, results: [] });
    writeHistory(storage, [LIGHT, FULL]);
    expect(readHistory(storage)).toEqual({ ok: true, results: [FULL, LIGHT] });
  });

  it('never stores an address, though a result may carry one (a shared link can)', () => {
    const storage = memoryStorage();
    writeHistory(storage, [{ ...FULL, address: '203.0.113.7' }]);
    expect(storage.map.get(HISTORY_KEY)).not.toContain('203.0.113.7');
    expect(readHistory(storage)).toEqual({ ok: true, results: [FULL] });
  });

  it(`keeps the newest ${String(HISTORY_MAX)} results`, () => {
    const storage = memoryStorage();
    const many = Array.from({ length: HISTORY_MAX + 5 }, (_, i): SharedResult => ({ at: at(0) + i * 60_000, mode: 'full', downloadBps: 1000 + i }));
    writeHistory(storage, many);
    const read = readHistory(storage);
    expect(read.ok && read.results.length).toBe(HISTORY_MAX);
    expect(read.ok && read.results[0]?.downloadBps).toBe(1005);
  });

  it('says why it cannot read what is stored, without changing it', () => {
    for (const [stored, reason] of [
      ['not json', /not JSON/],
      ['{"v":2,"results":[]}', /not a version 1 history/],
      ['{"v":1,"results":["1~zz"]}', /result 1 cannot be read: it has 2 parts/],
      ['{"v":1,"results":[7]}', /result 1 cannot be read: it is not a string/],
    ] as const) {
      const storage = memoryStorage();
      storage.setItem(HISTORY_KEY, stored);
      const read = readHistory(storage);
      expect(read.ok).toBe(false);
      expect(!read.ok && read.reason).toMatch(reason);
      expect(storage.getItem(HISTORY_KEY)).toBe(stored);
    }
  });

  it('merges each result once: the same one twice adds nothing, two tests in one second both stay', () => {
    expect(mergeHistory([FULL], [LIGHT, { ...FULL }])).toEqual([FULL, LIGHT]);
    expect(mergeHistory([LIGHT], [FULL])).toEqual([FULL, LIGHT]);
    const sameSecond = { ...LIGHT, downloadBps: 17_000_000 };
    expect(mergeHistory([LIGHT], [sameSecond])).toHaveLength(2);
  });
});

describe('history export and import', () => {
  it('JSON: the figures by name with their units, and the grade derived from the latencies', () => {
    const json = JSON.parse(historyFileJson([FULL])) as { netdiag_history: number; results: Record<string, unknown>[] };
    expect(json.netdiag_history).toBe(1);
    expect(json.results).toEqual([
      {
        tested_at: '2026-11-26T09:00:00.000Z',
        mode: 'full',
        download_mbps: 95.123456,
        upload_mbps: 19.5,
        latency_ms: 12.5,
        jitter_ms: 1.25,
        loaded_latency_down_ms: 40.125,
        loaded_latency_up_ms: 31,
        packet_loss_percent: 0.5,
        // 40.125 - 12.5 = 27.6 ms added: A (under 30).
        bufferbloat_grade: 'A',
      },
    ]);
  });

  it('CSV: a header naming the columns, a row per result, an unmeasured figure empty', () => {
    expect(historyFileCsv([LIGHT])).toBe(
      'tested_at,mode,download_mbps,upload_mbps,latency_ms,jitter_ms,loaded_latency_down_ms,loaded_latency_up_ms,packet_loss_percent,bufferbloat_grade\n' +
        '2026-11-26T09:05:00.000Z,light,18,9,20,,,,,\n',
    );
  });

  it('names the server, the streams and the family of a result that says them, in both formats, and reads them back', () => {
    const against: SharedResult = { ...LIGHT, server: 'fra', streams: 1, family: 'ipv4' };
    const json = JSON.parse(historyFileJson([FULL, against])) as { results: Record<string, unknown>[] };
    expect(json.results[0]).not.toHaveProperty('server');
    expect(json.results[1]).toMatchObject({ server: 'fra', streams: 1, family: 'ipv4' });
    expect(historyFileCsv([FULL, against]).split('\n')).toEqual([
      'tested_at,mode,download_mbps,upload_mbps,latency_ms,jitter_ms,loaded_latency_down_ms,loaded_latency_up_ms,packet_loss_percent,bufferbloat_grade,server,streams,family',
      '2026-11-26T09:00:00.000Z,full,95.123456,19.5,12.5,1.25,40.125,31,0.5,A,,,',
      '2026-11-26T09:05:00.000Z,light,18,9,20,,,,,,fra,1,ipv4',
      '',
    ]);
    for (const text of [historyFileJson([FULL, against]), historyFileCsv([FULL, against])]) expect(parseHistory(text)).toEqual({ ok: true, results: [FULL, against], watches: [] });
    const storage = memoryStorage();
    writeHistory(storage, [against]);
    expect(readHistory(storage)).toEqual({ ok: true, results: [against] });
    const bad = (change: Record<string, unknown>) => JSON.stringify({ netdiag_history: 1, results: [{ ...json.results[1], ...change }] });
    expect(parseHistory(bad({ server: 'Not A Name' }))).toEqual({ ok: false, reason: 'result 1: its server is not a server name' });
    expect(parseHistory(bad({ streams: 99 }))).toEqual({ ok: false, reason: 'result 1: its stream count is out of range' });
    expect(parseHistory(bad({ family: 'ipv5' }))).toEqual({ ok: false, reason: 'result 1: its family is neither ipv4 nor ipv6' });
  });

  it('reads back what it exported, in either format: the same results', () => {
    for (const text of [historyFileJson([FULL, LIGHT]), historyFileCsv([FULL, LIGHT])]) {
      expect(parseHistory(text)).toEqual({ ok: true, results: [FULL, LIGHT], watches: [] });
    }
  });

  it('refuses a file with one wrong result, naming it, rather than importing the rest', () => {
    const rows = JSON.parse(historyFileJson([FULL, LIGHT])) as { results: Record<string, unknown>[] };
    const bad = (change: Record<string, unknown>) => JSON.stringify({ netdiag_history: 1, results: [rows.results[0], { ...rows.results[1], ...change }] });
    expect(parseHistory(bad({ download_mbps: -1 }))).toEqual({ ok: false, reason: 'result 2: its download_mbps is not a number of zero or more' });
    expect(parseHistory(bad({ download_mbps: 'fast' }))).toEqual({ ok: false, reason: 'result 2: its download_mbps is not a number of zero or more' });
    expect(parseHistory(bad({ tested_at: 'yesterday' }))).toEqual({ ok: false, reason: 'result 2: its tested_at is not a time' });
    expect(parseHistory(bad({ mode: 'turbo' }))).toEqual({ ok: false, reason: 'result 2: its mode is neither light nor full' });
    // Past what a share link allows (1 Tbit/s): refused with the codec's own words.
    expect(parseHistory(bad({ upload_mbps: 2e6 }))).toEqual({ ok: false, reason: 'result 2: its upload is out of range' });
    expect(parseHistory('{"netdiag_history": 1, "results": [3]}')).toEqual({ ok: false, reason: 'result 1: it is not an object' });
  });

  // Issue 50 asks these to keep holding, each with a test: a file is hostile input.
  it('takes nothing from prototype keys: a __proto__ or constructor in the file reaches no object', () => {
    const rows = JSON.parse(historyFileJson([FULL])) as { results: Record<string, unknown>[] };
    const text = `{"netdiag_history": 1, "__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}, "results": [${JSON.stringify(rows.results[0]).replace('{', '{"__proto__": {"polluted": true}, ')}]}`;
    const parsed = parseHistory(text);
    expect(parsed).toEqual({ ok: true, results: [FULL], watches: [] });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    if (parsed.ok) expect(Object.getPrototypeOf(parsed.results[0])).toBe(Object.prototype);
  });

  it('keeps no markup: a string where a figure belongs is refused, naming the field', () => {
    const rows = JSON.parse(historyFileJson([FULL])) as { results: Record<string, unknown>[] };
    const text = JSON.stringify({ netdiag_history: 1, results: [{ ...rows.results[0], mode: '<img src=x onerror=alert(1)>' }] });
    expect(parseHistory(text)).toEqual({ ok: false, reason: 'result 1: its mode is neither light nor full' });
    const [header = '', row = ''] = historyFileCsv([FULL]).split('\n');
    expect(row).toContain(',full,');
    expect(parseHistory(`${header}\n${row.replace(',full,', ',<script>alert(1)</script>,')}\n`)).toMatchObject({ ok: false, reason: 'result 1: its mode is neither light nor full' });
  });

  it('refuses 200 000-deep nesting with a reason, not a stack overflow', () => {
    const deep = `{"netdiag_history": 1, "results": ${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    expect(() => parseHistory(deep)).not.toThrow();
    expect(parseHistory(deep)).toMatchObject({ ok: false });
    expect(parseHistory('['.repeat(200_000))).toMatchObject({ ok: false });
  });

  it('refuses what is not a history at all', () => {
    expect(parseHistory('{"results": []}')).toEqual({ ok: false, reason: 'it is not a netdiag history (version 1)' });
    expect(parseHistory('{oops')).toMatchObject({ ok: false, reason: expect.stringMatching(/^it is not valid JSON/) as unknown });
    expect(parseHistory('name,value\na,1')).toMatchObject({ ok: false, reason: expect.stringMatching(/^it is neither a netdiag history in JSON nor one in CSV/) as unknown });
  });
});

describe('watch summaries kept in the history', () => {
  const WATCH = {
    at: at(30),
    interval_s: 5,
    duration_s: 600,
    targets: [
      { label: 'you → this server', polls: 120, failed: 1, limited: 0, median_ms: 12.5, p95_ms: 30, jitter_ms: 2.25 },
      { label: 'this server → Western Europe', polls: 120, failed: 0, limited: 3, median_ms: 18, p95_ms: 21, jitter_ms: null },
    ],
  };

  it('are kept and read back, one per start time, oldest first', () => {
    const storage = memoryStorage();
    expect(readWatches(storage)).toEqual({ ok: true, watches: [] });
    writeWatches(storage, [{ ...WATCH, at: at(40) }, WATCH, WATCH]);
    expect(readWatches(storage)).toEqual({ ok: true, watches: [WATCH, { ...WATCH, at: at(40) }] });
    expect(storage.map.has(WATCH_HISTORY_KEY)).toBe(true);
  });

  it('go out with the JSON export and come back with its import; a CSV has none', () => {
    const json = historyFileJson([FULL], [WATCH]);
    expect((JSON.parse(json) as { watches: unknown[] }).watches).toEqual([WATCH]);
    expect(parseHistory(json)).toEqual({ ok: true, results: [FULL], watches: [WATCH] });
    expect(parseHistory(historyFileCsv([FULL]))).toEqual({ ok: true, results: [FULL], watches: [] });
  });

  it('a wrong one is refused, naming it and what is wrong, and stored ones that cannot be read are said', () => {
    const file = (change: Record<string, unknown>, target: Record<string, unknown> = {}) =>
      JSON.stringify({ netdiag_history: 1, results: [], watches: [WATCH, { ...WATCH, targets: [{ ...WATCH.targets[0], ...target }], ...change }] });
    expect(parseHistory(file({ interval_s: 0 }))).toEqual({ ok: false, reason: 'watch 2: its interval_s is not a whole number of seconds from 1' });
    expect(parseHistory(file({}, { median_ms: -1 }))).toEqual({ ok: false, reason: "watch 2: target 1's median_ms is not a round trip in ms or null" });
    expect(parseHistory(file({}, { label: 'evil\u001b[2J' }))).toEqual({ ok: false, reason: "watch 2: target 1's label is not a short line of text" });
    expect(parseHistory(file({}, { polls: 1.5 }))).toEqual({ ok: false, reason: "watch 2: target 1's polls is not a count" });
    expect(parseHistory(file({ targets: [] }))).toMatchObject({ ok: false, reason: 'watch 2: its targets are not a list of 1 to 20' });
    const storage = memoryStorage();
    storage.setItem(WATCH_HISTORY_KEY, '{"v":1,"watches":[{"at":"soon"}]}');
    expect(readWatches(storage)).toEqual({ ok: false, reason: 'watch summary 1: its at is not a time' });
    expect(storage.getItem(WATCH_HISTORY_KEY)).toBe('{"v":1,"watches":[{"at":"soon"}]}');
  });

  it(`keeps the newest ${String(WATCH_HISTORY_MAX)}`, () => {
    const many = Array.from({ length: WATCH_HISTORY_MAX + 3 }, (_, i) => ({ ...WATCH, at: at(0) + i * 1000 }));
    expect(mergeWatches([], many)).toHaveLength(WATCH_HISTORY_MAX);
    expect(mergeWatches([], many)[0]?.at).toBe(at(0) + 3000);
  });
});
