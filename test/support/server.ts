// Starts the real Node server in-process on an ephemeral loopback port, with logs captured.
import { Writable } from 'node:stream';
import { loadConfig, type Env } from '../../src/runtime/node/adapter/config.js';
import { createLogger } from '../../src/runtime/node/ports/logger.js';
import { startServer, type RunningServer } from '../../src/runtime/node/adapter/serve.js';

/**
 * A transfer budget that runs on loopback do not meet: speed tests there move 10-25 Gbit/s, past
 * the links the default budget is sized for (src/core/http/transfers.ts), and a suite that runs
 * test after test would meet it. Held itself in test/http/transfer-limits.test.ts.
 */
export const LOOPBACK_TRANSFERS = { NETDIAG_TRANSFER_BYTES_PER_MINUTE: '1000000000000000' };

export interface TestServer {
  url: string;
  port: number;
  running: RunningServer;
  /** Every log line written so far, parsed. */
  logs(): Record<string, unknown>[];
  /** Every log line written so far, raw. */
  rawLogs(): string;
  close(): Promise<void>;
}

export async function startTestServer(env: Env = {}): Promise<TestServer> {
  // Tests never reach outside the machine: unless a suite names its own, the DNS upstream is a
  // closed loopback port (lookups answer 503) instead of the public default.
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', NETDIAG_DNS_UPSTREAM: 'udp://127.0.0.1:9', ...env });
  let raw = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw += chunk.toString('utf8');
      done();
    },
  });
  const logger = createLogger(config.logLevel, sink);
  const running = await startServer(config, logger);
  return {
    url: `http://127.0.0.1:${running.port}`,
    port: running.port,
    running,
    rawLogs: () => raw,
    logs: () =>
      raw
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    close: () => running.drain(1000),
  };
}
