// The HTTP sink's timer under a burst (issue 54): a full batch is sent at the next timer turn,
// and the events accepted before that turn do not start the timer again, one timer and one
// promise each, as they did. Against a real collector through Node's poster.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HttpEventSink } from '../../src/engines/events/http-sink.js';
import { nodePoster } from '../../src/runtime/node/ports/event-sink.js';
import { SYSTEM_CLOCK } from '../../src/core/ports/clock.js';
import { startCollector, type Collector } from '../support/collector.js';
import { memoryLogger } from '../support/services.js';
import { eventually } from '../support/wait.js';

const collectors: Collector[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(collectors.splice(0).map((c) => c.close()));
});

const received = () => ({ event: 'speed_test_completed' as const, event_id: randomUUID(), properties: { source: 'cli' as const }, received_at: new Date().toISOString() });

describe('HTTP sink timer', () => {
  it('starts the timer once for a full batch, not again for each event accepted before it runs', async () => {
    const collector = await startCollector();
    collectors.push(collector);
    const sink = new HttpEventSink({ url: collector.url, queueSize: 10_000, logger: memoryLogger(), clock: SYSTEM_CLOCK, post: nodePoster() });
    const timers = vi.spyOn(globalThis, 'setTimeout');
    for (let i = 0; i < 499; i++) sink.accept(received());
    // The first event started the 200 ms wait for more; the 500th makes the batch full.
    expect(timers).toHaveBeenCalledTimes(1);
    sink.accept(received());
    expect(timers).toHaveBeenCalledTimes(2);
    for (let i = 0; i < 100; i++) sink.accept(received());
    expect(timers).toHaveBeenCalledTimes(2);
    // And every event still reaches the collector: the full batch at once, the rest after it.
    expect(await eventually(() => collector.events().length === 600, 5_000)).toBe(true);
    await sink.close(1_000);
  });
});
