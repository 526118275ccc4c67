// The sinks with no delivery of their own, for both runtimes: none and the structured log.
import type { Clock, Defer } from '../../core/ports/clock.js';
import type { EventSink } from '../../core/ports/event-sink.js';
import { HttpEventSink, type BatchPoster } from './http-sink.js';
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

/** The sinks both runtimes configure the same way (`NETDIAG_EVENTS_SINK`). */
type CommonSinkConfig = { kind: 'none' } | { kind: 'log' } | { kind: 'http'; url: string; authorization: string | undefined };

/** What the HTTP sink takes of its runtime: a clock, a logger, and, where the runtime has them, its poster, defer and longest backoff. */
interface SinkRuntime {
  logger: Logger;
  clock: Clock;
  queueSize: number;
  post?: BatchPoster;
  defer?: Defer;
  maxBackoffMs?: number;
}

/** The sink a configuration names, built alike on Node and on Workers. */
export function eventSinkFor(sink: CommonSinkConfig, runtime: SinkRuntime): EventSink {
  switch (sink.kind) {
    case 'none':
      return NONE_SINK;
    case 'log':
      return logSink(runtime.logger);
    case 'http':
      return new HttpEventSink({ url: sink.url, authorization: sink.authorization, ...runtime });
  }
}
