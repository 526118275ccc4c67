// The monitor's Prometheus endpoint (docs/monitor.md, "Prometheus"): the latest figure of each
// check against each server, its run counts by outcome, its breaches in a row, whether an alert is
// out, and when it last ran and runs next. Served on 127.0.0.1 by default: the history is the
// user's, and so are its figures.
import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Registry } from 'prom-client';
import type { AlertState, RunRecord } from './store.js';

export interface MetricsEndpoint {
  /** Notes a finished run and the alert state after it. */
  observe(run: RunRecord, state: AlertState): void;
  /** Notes when a check runs next. */
  scheduled(check: string, server: string, atMs: number): void;
  close(): Promise<void>;
}

/** Serves /metrics on `host:port`; resolves once it listens (rejects saying why it cannot). */
export async function startMetricsEndpoint(host: string, port: number): Promise<MetricsEndpoint & { port: number }> {
  const registry = new Registry();
  const labels = ['check', 'server'] as const;
  const runs = new Counter({ name: 'netdiag_monitor_runs_total', help: 'Runs of a check against a server, by outcome (ok: it ran and reported; failed: it did not run).', labelNames: [...labels, 'outcome'], registers: [registry] });
  const breaching = new Gauge({ name: 'netdiag_monitor_breaches_in_a_row', help: 'Runs in a row that missed an expectation or did not run.', labelNames: labels, registers: [registry] });
  const alerting = new Gauge({ name: 'netdiag_monitor_alerting', help: '1 while an alert is out for the check (sent after alert_after breaches, until a recovery).', labelNames: labels, registers: [registry] });
  const last = new Gauge({ name: 'netdiag_monitor_last_run_timestamp_seconds', help: 'When the check last ran (its start), seconds since the epoch.', labelNames: labels, registers: [registry] });
  const next = new Gauge({ name: 'netdiag_monitor_next_run_timestamp_seconds', help: 'When the check runs next, seconds since the epoch.', labelNames: labels, registers: [registry] });
  const figure = new Gauge({ name: 'netdiag_monitor_figure', help: "The last run's figures as its --json reports them (download_mbps, latency_ms, rpm, ...); a figure the run did not take is absent.", labelNames: [...labels, 'figure'], registers: [registry] });

  /** The figure names each check and server last showed, so a later run can remove those it lacks. */
  const shown = new Map<string, Set<string>>();
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '/').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found: the monitor serves /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': registry.contentType }).end(text);
      },
      () => {
        res.writeHead(500).end();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(new Error(`cannot serve metrics on ${host}:${String(port)}: ${err.code === 'EADDRINUSE' ? 'the port is in use' : err.message}`));
    });
    server.listen(port, host, resolve);
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : port,
    observe: (run, state) => {
      const l = { check: run.check, server: run.server };
      runs.inc({ ...l, outcome: run.ok ? 'ok' : 'failed' });
      breaching.set(l, state.streak);
      alerting.set(l, state.alerting ? 1 : 0);
      last.set(l, run.startedAt / 1000);
      // The last run's figures only: one it did not take (or all, from a run that failed) is
      // removed rather than left to read as current.
      const key = `${run.check}\n${run.server}`;
      const numbers = Object.entries(run.figures).filter((e): e is [string, number] => typeof e[1] === 'number' && Number.isFinite(e[1]));
      for (const name of shown.get(key) ?? []) if (!numbers.some(([n]) => n === name)) figure.remove({ ...l, figure: name });
      for (const [name, value] of numbers) figure.set({ ...l, figure: name }, value);
      shown.set(key, new Set(numbers.map(([name]) => name)));
    },
    scheduled: (check, serverUrl, atMs) => {
      next.set({ check, server: serverUrl }, atMs / 1000);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
