import type { Logger } from '../../core/ports.js';
import type { AnalyticsEvent } from './validate.js';

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

/** `NETDIAG_EVENTS_SINK=none`: accepted and forgotten. */
export const NONE_SINK: EventSink = {
  accept: () => undefined,
  close: () => Promise.resolve(),
};

/** `NETDIAG_EVENTS_SINK=log`: one JSON line per event on the structured log. */
export function logSink(logger: Logger): EventSink {
  return {
    accept: (event) => {
      logger.info({ analytics: event }, 'analytics event');
    },
    close: () => Promise.resolve(),
  };
}
