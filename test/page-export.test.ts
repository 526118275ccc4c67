// What the page's Export buttons write (web/export.ts): a speed test's figures and points, a
// watch's polls, in CSV a spreadsheet reads and JSON a script reads.
import { describe, expect, it } from 'vitest';
import { testCsv, testJson, watchCsv, watchJson, type TestExport } from '../web/export.js';

const TEST: TestExport = {
  shared: { at: Date.UTC(2026, 10, 25, 18, 0, 0), mode: 'full', downloadBps: 95_000_000, uploadBps: 19_500_000, latencyMs: 12.5, jitterMs: 1.25, loadedDownMs: 40, lossPercent: 0.5 },
  transfers: {
    download: [{ bytes: 100_000, duration: 8, bps: 100_000_000, ping: 2.5, countedBytes: 100_310, endMs: Date.UTC(2026, 10, 25, 18, 0, 1) }],
    upload: [{ bytes: 1_000_000, duration: 400, bps: 20_000_000, ping: 400, countedBytes: 1_005_000, endMs: Date.UTC(2026, 10, 25, 18, 0, 2) }],
  },
  roundTrips: { idle: [12, 13], loadedDown: [40], loadedUp: [] },
  loss: { sent: 1000, lost: 5 },
  classes: { streaming: 'great', gaming: 'good', video_call: 'great' },
  bufferbloat: { grade: 'B', increase_ms: 27.5 },
};

describe('speed-test export', () => {
  it('CSV: a row per figure (unmeasured ones empty), per transfer and per round trip', () => {
    expect(testCsv(TEST)).toBe(
      [
        'kind,name,bytes,duration_ms,value,unit',
        'figure,download_mbps,,,95,Mbit/s',
        'figure,upload_mbps,,,19.5,Mbit/s',
        'figure,latency_ms,,,12.5,ms',
        'figure,jitter_ms,,,1.25,ms',
        'figure,loaded_latency_down_ms,,,40,ms',
        'figure,loaded_latency_up_ms,,,,ms',
        'figure,packet_loss_percent,,,0.5,%',
        'transfer,download,100000,8,100,Mbit/s',
        'transfer,upload,1000000,400,20,Mbit/s',
        'round_trip,idle,,,12,ms',
        'round_trip,idle,,,13,ms',
        'round_trip,loaded_down,,,40,ms',
        '',
      ].join('\n'),
    );
  });

  it('JSON: the same figures with the time, mode, grade, classes, loss and points, each transfer as the rate rules read it', () => {
    expect(JSON.parse(testJson(TEST))).toEqual({
      tested_at: '2026-11-25T18:00:00.000Z',
      mode: 'full',
      figures: { download_mbps: 95, upload_mbps: 19.5, latency_ms: 12.5, jitter_ms: 1.25, loaded_latency_down_ms: 40, loaded_latency_up_ms: null, packet_loss_percent: 0.5 },
      bufferbloat: { grade: 'B', increase_ms: 27.5 },
      classes: { streaming: 'great', gaming: 'good', video_call: 'great' },
      packet_loss: { sent: 1000, lost: 5 },
      transfers: {
        download: [{ bytes: 100_000, counted_bytes: 100_310, duration_ms: 8, ttfb_ms: 2.5, ended_at_ms: Date.UTC(2026, 10, 25, 18, 0, 1), mbps: 100 }],
        upload: [{ bytes: 1_000_000, counted_bytes: 1_005_000, duration_ms: 400, ttfb_ms: 400, ended_at_ms: Date.UTC(2026, 10, 25, 18, 0, 2), mbps: 20 }],
      },
      round_trips_ms: { idle: [12, 13], loaded_down: [40], loaded_up: [] },
    });
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
