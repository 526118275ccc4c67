// `netdiag serve` and `netdiag probe` as processes: configuration from the environment, start,
// drain on SIGTERM or SIGINT (docs/api.md, "Shutdown").
import type pino from 'pino';
import { ConfigError, loadConfig, loadProbeConfig, type Env, type LogLevel } from '../../runtime/node/adapter/config.js';
import { createLogger, flushAndExit, routeConsole } from '../../runtime/node/ports/logger.js';

/** Grace for in-flight requests on SIGTERM (docs/api.md, "Shutdown"). */
const DRAIN_GRACE_MS = 5_000;

interface Running {
  drain(graceMs: number): Promise<void>;
}

function configError(err: unknown): void {
  if (err instanceof ConfigError) {
    process.stderr.write(`netdiag: invalid ${err.variable}: ${err.message}\n`);
    process.exit(2);
  }
}

/**
 * Loads the configuration (a bad value: one line naming it, exit 2), starts, and drains on
 * SIGTERM or SIGINT. The handlers go in before the socket listens, so a SIGTERM that arrives
 * as soon as the process announces itself still drains instead of killing it.
 */
async function run<C extends { logLevel: LogLevel }>(load: (env: Env) => C, start: (config: C, logger: pino.Logger) => Promise<Running>): Promise<void> {
  let config: C;
  try {
    config = load(process.env);
  } catch (err) {
    configError(err);
    throw err;
  }
  const logger = createLogger(config.logLevel);
  // Libraries that print (ioredis warns through console.warn) go through the JSON log too.
  routeConsole(logger);
  const starting = start(config, logger);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    void starting
      .then((running) => running.drain(DRAIN_GRACE_MS))
      .then(() => {
        logger.info({}, 'stopped');
        flushAndExit(logger, 0);
      });
  };
  process.on('SIGTERM', () => {
    stop('SIGTERM');
  });
  process.on('SIGINT', () => {
    stop('SIGINT');
  });
  try {
    await starting;
  } catch (err) {
    // A configuration fault found while opening what it names (a geo database that is not one).
    configError(err);
    throw err;
  }
}

// Each loads only its own modules: the probe stays small without the API's code.
export async function serve(): Promise<void> {
  const { startServe } = await import('../../runtime/node/adapter/serve.js');
  await run(loadConfig, startServe);
}

export async function probe(): Promise<void> {
  const { startProbe } = await import('../../runtime/node/probe-server.js');
  await run(loadProbeConfig, startProbe);
}
