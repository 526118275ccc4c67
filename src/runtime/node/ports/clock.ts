// Node's clock port: the platform's wall clock, and deferred work, which needs nothing to keep it
// alive here (src/core/ports/clock.ts).
import type { Defer } from '../../../core/ports/clock.js';

/**
 * The process outlives every response, so deferred work needs nothing to keep it alive; what
 * must finish at shutdown (the events queue) is flushed by the drain (adapter/serve.ts).
 */
export const processDefer: Defer = () => undefined;
