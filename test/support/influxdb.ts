// Debian's influxd (InfluxDB 1.x) for the monitor's InfluxDB suite: started on free loopback ports
// with a configuration and data of its own in a temp dir, stopped and started again on the same
// ports and data (a server down for a while), and read back through its query API (/query, InfluxQL).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopChild } from './process.js';

export interface Influxd {
  /** http://127.0.0.1:PORT */
  url: string;
  /** Stops the server (SIGTERM), keeping its data. */
  stop(): Promise<void>;
  /** Starts it again on the same ports and data. */
  start(): Promise<void>;
  /** An InfluxQL statement's first result's series (rows as objects by column, times in ms since the epoch), on `db` when given. */
  query(statement: string, db?: string): Promise<Row[]>;
  /** Stops it and removes its dir. */
  close(): Promise<void>;
}

export type Row = Record<string, unknown> & { measurement: string };

/** A port free now on 127.0.0.1 (influxd binds it a moment later; nothing else here takes ports). */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** influxd 1.x's configuration: every dir in `dir`, both listeners on loopback, no reporting home, no self-monitoring writes. */
function configText(dir: string, httpPort: number, rpcPort: number): string {
  return [
    'reporting-disabled = true',
    `bind-address = "127.0.0.1:${String(rpcPort)}"`,
    '[meta]',
    `  dir = "${join(dir, 'meta')}"`,
    '[data]',
    `  dir = "${join(dir, 'data')}"`,
    `  wal-dir = "${join(dir, 'wal')}"`,
    '  query-log-enabled = false',
    '[http]',
    `  bind-address = "127.0.0.1:${String(httpPort)}"`,
    '  log-enabled = false',
    '[monitor]',
    '  store-enabled = false',
    '[continuous_queries]',
    '  enabled = false',
    '',
  ].join('\n');
}

export async function startInfluxd(): Promise<Influxd> {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-influxd-'));
  const httpPort = await freePort();
  const config = join(dir, 'influxdb.conf');
  writeFileSync(config, configText(dir, httpPort, await freePort()));
  const url = `http://127.0.0.1:${String(httpPort)}`;
  let child: ChildProcess | undefined;
  let output = '';

  const start = async () => {
    output = '';
    const started = spawn('influxd', ['-config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = started;
    started.stdout.on('data', (d: Buffer) => (output += d.toString()));
    started.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const end = Date.now() + 10_000;
    for (;;) {
      if (started.exitCode !== null) throw new Error(`influxd exited ${String(started.exitCode)}: ${output.slice(-500)}`);
      const ping = await fetch(`${url}/ping`).catch(() => undefined);
      if (ping?.status === 204) return;
      if (Date.now() > end) throw new Error(`influxd did not answer /ping within 10 s: ${output.slice(-500)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    await stopChild(running);
  };
  const query = async (statement: string, db?: string): Promise<Row[]> => {
    const params = new URLSearchParams({ q: statement, epoch: 'ms', ...(db === undefined ? {} : { db }) });
    const res = await fetch(`${url}/query`, { method: 'POST', body: params });
    const body = (await res.json()) as { results?: { error?: string; series?: { name: string; columns: string[]; values: unknown[][] }[] }[]; error?: string };
    const result = body.results?.[0];
    const error = body.error ?? result?.error;
    if (!res.ok || error !== undefined) throw new Error(`influxd refused ${statement}: ${String(res.status)} ${error ?? ''}`);
    return (result?.series ?? []).flatMap((s) => s.values.map((v) => ({ measurement: s.name, ...Object.fromEntries(s.columns.map((c, i) => [c, v[i]])) })));
  };

  try {
    await start();
  } catch (err) {
    await stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url,
    stop,
    start,
    query,
    close: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
