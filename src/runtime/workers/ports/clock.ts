// Workers' clock port: the platform's wall clock, and deferred work handed to the request's
// waitUntil (src/core/ports/clock.ts).
import { waitUntil } from 'cloudflare:workers';
import type { Defer } from '../../../core/ports/clock.js';

/**
 * `waitUntil` from `cloudflare:workers` belongs to the request being served. Work deferred from
 * a timer that fired after every request ended has no request to belong to: it runs while the
 * isolate lives, and its owner schedules it again if it was dropped (DeferredTimer).
 */
export const workersDefer: Defer = (work) => {
  try {
    waitUntil(work);
  } catch {
    // No request in progress: nothing to attach to.
  }
};
