// The sinks with no delivery of their own, for both runtimes: none and the structured log.
import type { EventSink } from '../../core/ports/event-sink.js';
import type { Logger } from '../../core/ports/logger.js';

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
