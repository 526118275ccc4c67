// The event sink port's conformance suite (event-sink.ts): `accept` never blocks or throws and
// `close` ends within its grace, whether the sink delivers or not; what a sink delivers is the
// event as accepted. Run by the none, log and HTTP sinks on Node and the HTTP sink behind
// /metrics' observer (src/runtime/node/ports/conformance.test.ts), and by the HTTP and Analytics Engine
// sinks in workerd (test/workers/ports.test.ts).
import { describe, expect, it } from 'vitest';
import type { EventSink, ReceivedEvent } from './event-sink.js';

interface SinkUnderTest {
  sink: EventSink;
  /** What reached the sink's destination, where the test can see it (undefined for none). */
  delivered?: () => Promise<unknown[]> | unknown[];
}

/** A completed speed test's event as the intake hands it on. */
const SAMPLE_EVENT: ReceivedEvent = {
  event: 'speed_test_completed',
  event_id: '3f1c6b8e-2a4d-4c1e-9b7a-5d6e7f8a9b0c',
  properties: { download_mbps: 94.2, client: 'netdiag-cli' },
  received_at: '2026-11-28T03:00:00.000Z',
};

/** How much longer than its grace a close may take (a timer's slack, a socket's teardown). */
const CLOSE_SLACK_MS = 1_000;

export function eventSinkConformance(name: string, make: () => Promise<SinkUnderTest> | SinkUnderTest): void {
  describe(`${name} event sink conformance`, () => {
    it('accepts at once without throwing, a thousand in a row too, and closes within its grace', async () => {
      const { sink } = await make();
      const started = performance.now();
      for (let i = 0; i < 1_000; i++) sink.accept({ ...SAMPLE_EVENT, event_id: `${SAMPLE_EVENT.event_id.slice(0, -4)}${String(i).padStart(4, '0')}` });
      // Accepting is queueing: a thousand take nowhere near a network round trip each.
      expect(performance.now() - started).toBeLessThan(1_000);
      const closing = performance.now();
      await sink.close(500);
      expect(performance.now() - closing).toBeLessThan(500 + CLOSE_SLACK_MS);
    });

    it('takes an event after close without throwing', async () => {
      const { sink } = await make();
      await sink.close(100);
      expect(() => {
        sink.accept(SAMPLE_EVENT);
      }).not.toThrow();
    });

    it('delivers the event as it was accepted, by close at the latest', async () => {
      const { sink, delivered } = await make();
      sink.accept(SAMPLE_EVENT);
      await sink.close(2_000);
      if (delivered === undefined) return;
      expect(JSON.stringify(await delivered())).toContain(SAMPLE_EVENT.event_id);
    });
  });
}
