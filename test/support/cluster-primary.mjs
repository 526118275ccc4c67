// The primary's side of the cluster limiter store, in a child process of its own: the test
// process is the "worker" and talks to it over a real IPC channel. Runs the built code.
import { answerLimiterRequests } from '../../dist/runtime/node/ports/limiter-store/cluster-store.js';
import { MemoryLimiterStore } from '../../dist/core/ratelimit/memory-store.js';

answerLimiterRequests(process, new MemoryLimiterStore({ now: () => Date.now() }));
process.send({ ready: true });
