// What the page's Export buttons write (web/results/export.ts): a speed test's figures and points, a
// watch's polls, in CSV a spreadsheet reads and JSON a script reads.
import { describe, expect, it } from 'vitest';
import { measureDirection, PROFILES } from '../../src/common/speedtest/working.js';
import { testCsv, testJson, watchCsv, watchJson, type TestExport } from '../../web/results/export.js';

// A download of 3 MB a quarter second (96 Mbit/s) for a second, counted each 125 ms, and two round trips.
const progress = Array.from({ length: 8 }, (_, i) => ({ atMs: 125 * (i + 1), bytes: 1_500_000 * (i + 1) }));
const roundTrips = [{ atMs: 300, ms: 40 }, { atMs: 800, ms: 42.5 }];

const TEST: TestExport = {
  shared: { at: Date.UTC(2026, 10, 25, 18, 0, 0), mode: 'full', downloadBps: 95_000_000, uploadBps: 19_500_000, latencyMs: 12.5, jitterMs: 1.25, loadedDownMs: 40, lossPercent: 0.5, rpm: 1200 },
  setup: { server: { name: 'fra', url: 'https://fra.example.net', location: 'Frankfurt, DE' }, origin: 'https://fra.example.net', streams: 4, family: 'ipv6' },
  measured: { download: { streams: 4, progress, roundTrips, endMs: 1010, measure: measureDirection(progress, roundTrips, 1010, PROFILES.full) }, upload: null },
  roundTrips: { idle: [12, 13], loadedDown: [40, 42.5], loadedUp: [] },
  loss: { sent: 1000, lost: 5 },
  classes: { streaming: 'great', gaming: 'good', video_call: 'great' },
  bufferbloat: { grade: 'B', increase_ms: 27.5 },
};

describe('speed-test export', () => {
  it('CSV: a row per setting (the server, its origin, the streams, the family), per figure (unmeasured ones empty), per quarter second of the load and per round trip', () => {
    expect(testCsv(TEST)).toBe(
      [
        'kind,name,bytes,duration_ms,value,unit',
        'setting,server,,,fra,',
        'setting,origin,,,https://fra.example.net,',
        'setting,streams,,,4,',
        'setting,family,,,ipv6,',
        'figure,download_mbps,,,95,Mbit/s',
        'figure,upload_mbps,,,19.5,Mbit/s',
        'figure,latency_ms,,,12.5,ms',
        'figure,jitter_ms,,,1.25,ms',
        'figure,loaded_latency_down_ms,,,40,ms',
        'figure,loaded_latency_up_ms,,,,ms',
        'figure,packet_loss_percent,,,0.5,%',
        'figure,responsiveness_rpm_estimate,,,1200,RPM',
        'interval,download,,250,96,Mbit/s',
        'interval,download,,250,96,Mbit/s',
        'interval,download,,250,96,Mbit/s',
        'interval,download,,250,96,Mbit/s',
        'round_trip,idle,,,12,ms',
        'round_trip,idle,,,13,ms',
        'round_trip,loaded_down,,,40,ms',
        'round_trip,loaded_down,,,42.5,ms',
        '',
      ].join('\n'),
    );
  });

  it('CSV: a test against this page\'s own origin has no server name, and no family when none was chosen', () => {
    const own = testCsv({ ...TEST, setup: { server: null, origin: 'https://netdiag.example.net', streams: 1, family: null } });
    expect(own.split('\n').slice(1, 5)).toEqual(['setting,server,,,,', 'setting,origin,,,https://netdiag.example.net,', 'setting,streams,,,1,', 'setting,family,,,,']);
  });

  it('JSON: the same figures with the time, mode, server, origin, streams, family, grade, classes, loss, and each direction\'s counts and round trips as the rules read them', () => {
    const window = TEST.measured.download?.measure.sustained;
    expect(JSON.parse(testJson(TEST))).toEqual({
      tested_at: '2026-11-25T18:00:00.000Z',
      mode: 'full',
      server: { name: 'fra', url: 'https://fra.example.net', location: 'Frankfurt, DE' },
      origin: 'https://fra.example.net',
      streams: 4,
      family: 'ipv6',
      figures: { download_mbps: 95, upload_mbps: 19.5, latency_ms: 12.5, jitter_ms: 1.25, loaded_latency_down_ms: 40, loaded_latency_up_ms: null, packet_loss_percent: 0.5, responsiveness_rpm_estimate: 1200 },
      bufferbloat: { grade: 'B', increase_ms: 27.5 },
      classes: { streaming: 'great', gaming: 'good', video_call: 'great' },
      packet_loss: { sent: 1000, lost: 5 },
      measured: {
        // The window and its bytes as the rules chose them (src/common/speedtest/working.ts).
        download: { streams: 4, end_ms: 1010, window_ms: [window?.startMs, window?.endMs], steady: window?.steady, bytes: window?.bytes, resent_round_trips: 0, rates_mbps: [96, 96, 96, 96], progress: progress.map((p) => [p.atMs, p.bytes]), round_trips: [[300, 40], [800, 42.5]] },
        upload: null,
      },
      round_trips_ms: { idle: [12, 13], loaded_down: [40, 42.5], loaded_up: [] },
    });
  });

  it('JSON: the counts and round trips as exported give the figures again by the rules', () => {
    const exported = JSON.parse(testJson(TEST)) as { measured: { download: { progress: [number, number][]; round_trips: [number, number][]; end_ms: number } } };
    const d = exported.measured.download;
    const again = measureDirection(d.progress.map(([atMs, bytes]) => ({ atMs, bytes })), d.round_trips.map(([atMs, ms]) => ({ atMs, ms })), d.end_ms, PROFILES.full);
    expect(again).toEqual(TEST.measured.download?.measure);
  });
});

describe('watch export', () => {
  const polls = [
    { at: Date.UTC(2026, 10, 25, 18, 0, 0), target: 'server', rtt_ms: 1.5, status: 'ok' as const },
    { at: Date.UTC(2026, 10, 25, 18, 0, 1), target: 'weur', rtt_ms: null, status: 'limited' as const },
  ];
  it('CSV and JSON: a row per poll with its time, target, round trip (empty or null when none) and status', () => {
    expect(watchCsv(polls)).toBe('time,target,rtt_ms,status\n2026-11-25T18:00:00.000Z,server,1.5,ok\n2026-11-25T18:00:01.000Z,weur,,limited\n');
    expect(JSON.parse(watchJson(polls))).toEqual([
      { time: '2026-11-25T18:00:00.000Z', target: 'server', rtt_ms: 1.5, status: 'ok' },
      { time: '2026-11-25T18:00:01.000Z', target: 'weur', rtt_ms: null, status: 'limited' },
    ]);
  });
});
