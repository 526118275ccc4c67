#!/usr/bin/env node
import { ConfigError, loadConfig } from '../runtime/node/config.js';
import { createLogger } from '../runtime/node/logger.js';
import { startServer } from '../runtime/node/serve.js';

const HELP = `netdiag: privacy-first network information and diagnostics API

Usage:
  netdiag serve      run the API (configuration from the environment; see README)
  netdiag probe      run a regional latency probe (PORT, default 8081)
  netdiag --help     show this text
`;

/** Grace for in-flight requests on SIGTERM (SPEC-NOTES, Privacy and lifecycle). */
const DRAIN_GRACE_MS = 5_000;

async function serve(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`netdiag: invalid ${err.variable}: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  // Signal handlers go in before the socket listens, so a SIGTERM that arrives as soon as the
  // service announces itself still drains instead of killing the process.
  const starting = startServer(config, logger);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    void starting
      .then((running) => running.drain(DRAIN_GRACE_MS))
      .then(() => {
        logger.info({}, 'stopped');
        logger.flush(() => process.exit(0));
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
    if (err instanceof ConfigError) {
      process.stderr.write(`netdiag: invalid ${err.variable}: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

async function main(argv: string[]): Promise<void> {
  const command = argv[0] ?? 'serve';
  switch (command) {
    case 'serve':
      await serve();
      return;
    case '--help':
    case '-h':
    case 'help':
      process.stdout.write(HELP);
      return;
    default:
      process.stderr.write(`netdiag: unknown command "${command}"\n\n${HELP}`);
      process.exit(2);
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`netdiag: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
