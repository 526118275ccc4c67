// POST /v1/events on Workers: the same checks as on Node (202, 400, 413, 415), and the three
// sinks: Analytics Engine (a recording binding), an HTTP collector kept alive by waitUntil, the log.
import { inject, describe, expect, it } from 'vitest';
import { expectContract } from '../support/contract.js';
import { codeOf, workerWith } from './worker.js';

const EVENT = {
  event: 'speed_test_completed',
  event_id: '3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60',
  properties: { source: 'web', mode: 'light', download_mbps: 94.2, upload_mbps: 18.5, latency_ms: 12.5, gaming_quality: 'good', undeclared: 'dropped' },
};

function post(body: string, type = 'application/json'): RequestInit & { caller: string } {
  return { method: 'POST', headers: { 'Content-Type': type }, body, caller: '198.51.100.40' };
}

/** An Analytics Engine dataset that records what is written (locally the real one does nothing). */
function recordingDataset() {
  const points: AnalyticsEngineDataPoint[] = [];
  return { points, writeDataPoint: (point?: AnalyticsEngineDataPoint) => { if (point !== undefined) points.push(point); } };
}

describe('events intake in workerd', () => {
  const worker = workerWith({ NETDIAG_EVENTS_SINK: 'none' });

  it('a valid event is 202', async () => {
    const res = await worker.send('/v1/events', post(JSON.stringify(EVENT)));
    expectContract('POST', '/v1/events', res);
    expect(res.status).toBe(202);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it.each([
    ['not JSON', '{', 'invalid_json'],
    ['an undeclared field', JSON.stringify({ ...EVENT, extra: 1 }), 'invalid_event'],
    ['an event_id that is not a UUID', JSON.stringify({ ...EVENT, event_id: 'x' }), 'invalid_event'],
  ])('%s is 400', async (_name, body, code) => {
    const res = await worker.send('/v1/events', post(body));
    expectContract('POST', '/v1/events', res);
    expect(res.status).toBe(400);
    expect(codeOf(res)).toBe(code);
  });

  it('a body over 4096 bytes is 413, with or without Content-Length', async () => {
    const big = JSON.stringify({ ...EVENT, properties: { source: 'web', tool_version: 'x'.repeat(5000) } });
    const res = await worker.send('/v1/events', post(big));
    expectContract('POST', '/v1/events', res);
    expect(res.status).toBe(413);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const chunked = await worker.send('/v1/events', { ...post(''), body: stream });
    expect(chunked.status).toBe(413);
  });

  it('another media type is 415', async () => {
    const res = await worker.send('/v1/events', post(JSON.stringify(EVENT), 'text/plain'));
    expectContract('POST', '/v1/events', res);
    expect(res.status).toBe(415);
    expect(codeOf(res)).toBe('unsupported_media_type');
  });
});

describe('event sinks in workerd', () => {
  it('Analytics Engine: one data point per event, exactly the validated fields, nothing about the caller', async () => {
    const dataset = recordingDataset();
    const worker = workerWith({ NETDIAG_EVENTS_SINK: 'analytics-engine', ANALYTICS: dataset });
    const res = await worker.send('/v1/events', { ...post(JSON.stringify(EVENT)), headers: { 'Content-Type': 'application/json', 'User-Agent': 'agent/1.0' } });
    expect(res.status).toBe(202);
    expect(dataset.points).toHaveLength(1);
    const point = dataset.points[0];
    expect(point?.indexes).toEqual(['speed_test_completed']);
    const blobs = point?.blobs ?? [];
    expect(blobs[0]).toBe('speed_test_completed');
    expect(blobs[1]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(blobs).toContain('web');
    expect(blobs).toContain('light');
    expect(blobs).toContain('good');
    expect(point?.doubles).toEqual(expect.arrayContaining([94.2, 18.5, 12.5]));
    const written = JSON.stringify(point);
    for (const absent of ['198.51.100.40', 'agent/1.0', 'dropped', EVENT.event_id]) expect(written).not.toContain(absent);
    expect(blobs.length).toBeLessThanOrEqual(20);
    expect(point?.doubles?.length).toBeLessThanOrEqual(20);
  });

  it('an HTTP collector gets the event after the response, through waitUntil', async () => {
    const collector = inject('collectorUrl');
    const worker = workerWith({ NETDIAG_EVENTS_SINK: collector });
    const id = crypto.randomUUID();
    const res = await worker.send('/v1/events', post(JSON.stringify({ ...EVENT, event_id: id })));
    expect(res.status).toBe(202);
    const received = new URL('/received', collector).href;
    let events: { event_id: string; properties: Record<string, unknown> }[] = [];
    for (let i = 0; i < 50 && !events.some((e) => e.event_id === id); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      events = (await (await fetch(received)).json<{ events: typeof events }>()).events;
    }
    const delivered = events.find((e) => e.event_id === id);
    expect(delivered?.properties).toEqual({ source: 'web', mode: 'light', download_mbps: 94.2, upload_mbps: 18.5, latency_ms: 12.5, gaming_quality: 'good' });
  });

  it('the log sink writes one JSON line per event', async () => {
    const lines: string[] = [];
    const original = console.log;
    console.log = (line: string) => lines.push(line);
    try {
      const res = await workerWith({ NETDIAG_EVENTS_SINK: 'log' }).send('/v1/events', post(JSON.stringify(EVENT)));
      expect(res.status).toBe(202);
    } finally {
      console.log = original;
    }
    const logged = lines.map((l) => JSON.parse(l) as { msg: string; analytics?: { event: string } });
    expect(logged.filter((l) => l.msg === 'analytics event').map((l) => l.analytics?.event)).toEqual(['speed_test_completed']);
  });
});
