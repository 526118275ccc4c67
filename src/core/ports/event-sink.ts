// The event sink port: where accepted analytics events go. Its conformance suite is
// event-sink.conformance.ts beside it; every sink runs it.
import type { EventName } from '../../common/event-names.js';

/** A validated event: declared fields only, undeclared `properties` already dropped. */
export interface AnalyticsEvent {
  event: EventName;
  event_id: string;
  properties: Record<string, string | number>;
}

/** What reaches a sink: exactly the validated event and when it was received (docs/api.md). */
export interface ReceivedEvent extends AnalyticsEvent {
  received_at: string;
}

/**
 * Port: where accepted events go. `accept` never blocks and never throws: delivery is
 * best-effort and a failing sink must not change the 202 (the API contract).
 */
export interface EventSink {
  accept(event: ReceivedEvent): void;
  /** Delivers what is still queued, within `graceMs`; called once on shutdown. */
  close(graceMs: number): Promise<void>;
}
