// `netdiag serve` with NETDIAG_WORKERS > 1, started from the built primary (startThreads) so a
// test can end one worker thread as the worst fault would: a line `end-thread` on stdin takes the
// limiter table's lock in the first thread's name, as if it had died mid-hit, then terminates
// it (it waits on that lock inside a request, so it ends once the wait gives up). SIGTERM drains
// as `netdiag serve` does.
import { createInterface } from 'node:readline';
import { loadConfig } from '../../dist/runtime/node/adapter/config.js';
import { startThreads } from '../../dist/runtime/node/adapter/threads.js';
import { createLogger } from '../../dist/runtime/node/ports/logger.js';
import { TableLock, tableViews } from '../../dist/core/ratelimit/shared-table.js';

const config = loadConfig(process.env);
const logger = createLogger(config.logLevel);
const running = await startThreads(config, logger);
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line !== 'end-thread') return;
  const [victim] = running.threads;
  // The id the primary gives a thread's lock: its thread id plus one (limiter.ts).
  new TableLock(tableViews(running.limiterTable), victim.threadId + 1).acquire();
  logger.info({ worker: victim.threadId }, 'ending a worker thread holding the limiter table\'s lock');
  void victim.terminate();
});
process.once('SIGTERM', () => {
  void running.drain(5_000).then(() => process.exit(0));
});
