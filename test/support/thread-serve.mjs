// `netdiag serve` with NETDIAG_WORKERS > 1, started from the built primary (startThreads) so a
// test can end one worker thread as a fault would: a line `end-thread` on stdin terminates the
// first of them (Worker.terminate stops its JavaScript wherever it is, a limiter hit included).
// SIGTERM drains as `netdiag serve` does.
import { createInterface } from 'node:readline';
import { loadConfig } from '../../dist/runtime/node/adapter/config.js';
import { startThreads } from '../../dist/runtime/node/adapter/threads.js';
import { createLogger } from '../../dist/runtime/node/ports/logger.js';

const config = loadConfig(process.env);
const logger = createLogger(config.logLevel);
const running = await startThreads(config, logger);
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line !== 'end-thread') return;
  const [victim] = running.threads;
  logger.info({ worker: victim.threadId }, 'ending a worker thread');
  void victim.terminate();
});
process.once('SIGTERM', () => {
  void running.drain(5_000).then(() => process.exit(0));
});
