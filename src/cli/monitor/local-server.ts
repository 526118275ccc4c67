// The monitor's own listener (docs/monitor.md, "The local page" and "Prometheus"), on
// 127.0.0.1:9465 unless the configuration says otherwise: the local page (web/monitor/) with the
// page's CSS and catalogues, the history it reads (/history.json: the last PAGE_DAYS days),
// /latest.json for dashboards (latest.ts), /metrics for Prometheus, and pause and resume
// (local-control.ts). The history is the user's: a request must name the monitor by an
// address, `localhost`, the listen host or a name the configuration's `hosts` gives, so a web page
// the user visits cannot read it through a name of its own pointed at this machine (DNS
// rebinding), on whatever address the monitor listens.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { MONITOR_CATALOGUES, MONITOR_CSS, MONITOR_HTML, MONITOR_JS } from '../../generated/monitor-page-assets.js';
import type { MonitorConfig } from './monitor-config.js';
import { checkKey, type MonitorMetrics } from './monitor-metrics.js';
import { log, outcomeOf } from './setup.js';
import type { Store } from './store.js';
import { budgetsJson, budgetsLeft } from './gates/budget.js';
import { latestJson } from './latest.js';
import { answerControl, csrfToken, type ControlSources } from './local-control.js';
import { makeControlToken, removeControlToken } from './control-token.js';

/** How far back the page reads the history; `netdiag monitor history` has it all. */
const PAGE_DAYS = 30;

/** The page's policy: its own script, style and requests, nothing else (as the server's page). */
const POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** What the listener reads from the monitor as it runs: the configuration is swapped by a reload. */
interface Sources {
  store: () => Store;
  config: () => MonitorConfig;
  metrics: MonitorMetrics;
}

/** The scalar figures of a run (numbers and text): the page shows no arrays or objects (a speed test's measured series). */
const scalars = (figures: Readonly<Record<string, unknown>>) => Object.fromEntries(Object.entries(figures).filter(([, v]) => v === null || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))));

/** /history.json: each configured check against each server (and any only the history names) with its state, and the runs since `sinceMs`. */
function history(sources: Sources, sinceMs: number): string {
  const store = sources.store();
  const config = sources.config();
  const runs = store.runs(sinceMs);
  const pairs = new Map<string, { check: string; server: string }>();
  for (const check of config.checks) for (const server of config.servers) pairs.set(checkKey(check.name, server), { check: check.name, server });
  for (const run of runs) if (!pairs.has(checkKey(run.check, run.server))) pairs.set(checkKey(run.check, run.server), { check: run.check, server: run.server });
  const next = sources.metrics.nextRuns();
  const checks = [...pairs.entries()].map(([key, pair]) => {
    const at = next.get(key);
    return { ...pair, ...store.alertState(pair.check, pair.server), next_run_at: at === undefined ? null : new Date(at).toISOString() };
  });
  return JSON.stringify({
    checks,
    runs: runs.map((r) => ({ check: r.check, server: r.server, started_at: new Date(r.startedAt).toISOString(), outcome: outcomeOf(r), ok: r.ok, error: r.error, breaches: r.breaches, figures: scalars(r.figures), source: r.source ?? 'monitor', chosen: r.chosen ?? null, source_address: r.sourceAddress ?? null, bytes_down: r.bytesDown ?? null, bytes_up: r.bytesUp ?? null })),
    since: new Date(sinceMs).toISOString(),
    budgets: budgetsJson(budgetsLeft(store, config, Date.now())),
  });
}

/** Whether a request names the monitor as it answers to (above). */
function allowedHost(req: IncomingMessage, listenHost: string, hosts: readonly string[]): boolean {
  const host = /^(\[[^\]]*\]|[^:]*)(?::[0-9]*)?$/.exec(req.headers.host ?? '')?.[1]?.replace(/^\[|\]$/g, '').toLowerCase() ?? '';
  return host === 'localhost' || isIP(host) !== 0 || host === listenHost.toLowerCase() || hosts.includes(host);
}

function send(res: ServerResponse, status: number, type: string, body: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer', ...extra }).end(body);
}

/** What a request is answered from: the monitor's sources, the host it listens on, and the pause control's. */
interface Answering {
  sources: Sources;
  listenHost: string;
  control: ControlSources;
  csrf: string;
}

async function answer(req: IncomingMessage, res: ServerResponse, { sources, listenHost, control, csrf }: Answering): Promise<void> {
  if (!allowedHost(req, listenHost, sources.config().hosts)) {
    send(res, 403, 'text/plain; charset=utf-8', "Forbidden: the monitor answers requests that name it by address, as localhost, by its listen host or by a name in its configuration's hosts (its history is yours; another name may be a web page reaching it through DNS rebinding)\n");
    return;
  }
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  if (await answerControl(req, res, path, control, csrf, send)) return;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(res, 405, 'text/plain; charset=utf-8', 'Method not allowed: the monitor serves GET\n', { Allow: 'GET, HEAD' });
    return;
  }
  const catalogue = /^\/i18n\/([a-z]{2})\.json$/.exec(path)?.[1];
  if (path === '/') send(res, 200, 'text/html; charset=utf-8', MONITOR_HTML, { 'Content-Security-Policy': POLICY });
  else if (path === '/monitor.js') send(res, 200, 'text/javascript; charset=utf-8', MONITOR_JS);
  else if (path === '/app.css') send(res, 200, 'text/css; charset=utf-8', MONITOR_CSS);
  else if (catalogue !== undefined && catalogue in MONITOR_CATALOGUES) send(res, 200, 'application/json; charset=utf-8', MONITOR_CATALOGUES[catalogue as keyof typeof MONITOR_CATALOGUES]);
  else if (path === '/history.json') send(res, 200, 'application/json; charset=utf-8', history(sources, Date.now() - PAGE_DAYS * 86_400_000));
  else if (path === '/latest.json') send(res, 200, 'application/json; charset=utf-8', latestJson(sources.store(), sources.config(), sources.metrics.nextRuns(), Date.now()));
  else if (path === '/metrics') {
    // The budgets as they stand at the scrape: bytes leave the window as time passes, not only at a run.
    sources.metrics.budgets(budgetsLeft(sources.store(), sources.config(), Date.now()));
    const { body, contentType } = await sources.metrics.text();
    send(res, 200, contentType, body);
  } else send(res, 404, 'text/plain; charset=utf-8', 'Not found: the monitor serves its page at /, its history at /history.json, its latest results at /latest.json and its metrics at /metrics\n');
}

export interface LocalServer {
  /** The port it listens on (the one given, or the one the system chose for 0). */
  port: number;
  close(): Promise<void>;
}

/**
 * Listens on `host:port`; resolves once it does (rejects with the system's error, its code saying
 * why it cannot). The control token is made beside the history named at start only once the port
 * is this monitor's, and removed on close: a second monitor refused the port (EADDRINUSE) leaves
 * the running one's token alone.
 */
export async function startLocalServer(host: string, port: number, sources: Sources): Promise<LocalServer> {
  const database = sources.config().database;
  // No request handler until the token is made: none is accepted before listen resolves anyway.
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  let token: string;
  try {
    token = makeControlToken(database);
  } catch (err) {
    server.close();
    throw err;
  }
  const answering: Answering = { sources, listenHost: host, control: { store: sources.store, log, token }, csrf: csrfToken() };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    answer(req, res, answering).catch((err: unknown) => {
      // A history that cannot be read (the disk gone) is said to the page, never a stack trace.
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', `The monitor could not answer: ${err instanceof Error ? err.message : String(err)}\n`);
    });
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        removeControlToken(database);
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
