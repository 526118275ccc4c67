// The InfluxDB outlet (docs/monitor.md, "InfluxDB"): each run written as a line-protocol point,
// fed from the history by outlet.ts (in order, a failed write kept and tried again). What an
// answer means, per InfluxDB's write API (1.x "/write HTTP response summary", 2.x "/api/v2/write"):
//   2xx: written.
//   400 (1.x, 2.x) and 422 (2.x): the points themselves are refused (a field-type conflict, a line
//     it cannot parse, a time outside the retention policy); trying again never helps, so the
//     batch is written a run at a time and a run still refused is said in the log and passed over
//     (it stays in the history). 1.x has already written the rest of the batch (a partial write).
//   401, 403, 404 (no such database or bucket), 413, 429, 5xx and no answer: a setting or the
//     server to be put right; the runs are kept and tried again.
import type { NumberedRun } from '../store.js';
import type { Outlet } from './outlet.js';
import { pointLines } from './influxdb-line.js';
import type { InfluxdbSettings } from './influxdb-settings.js';

export const INFLUXDB_OUTLET = 'influxdb';

/** How long a write may take: a batch of 100 points is a few kilobytes. */
const WRITE_TIMEOUT_MS = 10_000;
/** Statuses that say these points will never be taken (above). */
const REFUSED_FOR_GOOD = new Set([400, 422]);

/** The write endpoint and its headers: the database or bucket, ms timestamps, the credentials in a header (never in the URL, which a proxy may log). */
function writeRequest(settings: InfluxdbSettings): { url: string; headers: Record<string, string> } {
  const headers: Record<string, string> = { 'Content-Type': 'text/plain; charset=utf-8' };
  if (settings.version === 2) {
    const query = new URLSearchParams({ org: settings.org, bucket: settings.bucket, precision: 'ms' });
    return { url: `${settings.url}/api/v2/write?${query.toString()}`, headers: { ...headers, Authorization: `Token ${settings.token}` } };
  }
  const query = new URLSearchParams({ db: settings.database, precision: 'ms', ...(settings.retentionPolicy === null ? {} : { rp: settings.retentionPolicy }) });
  const auth: Record<string, string> = settings.username === null || settings.password === null ? {} : { Authorization: `Basic ${Buffer.from(`${settings.username}:${settings.password}`).toString('base64')}` };
  return { url: `${settings.url}/write?${query.toString()}`, headers: { ...headers, ...auth } };
}

/** Where the runs go, as the log names it: the server and its database or bucket, no credentials. */
export function targetName(settings: InfluxdbSettings): string {
  return settings.version === 2 ? `${settings.url} (org ${settings.org}, bucket ${settings.bucket})` : `${settings.url} (database ${settings.database}${settings.retentionPolicy === null ? '' : `, retention policy ${settings.retentionPolicy}`})`;
}

/** An answer's status and InfluxDB's own reason (1.x `{"error"}`, 2.x `{"message"}`), cut short. */
type Answer = { status: number; reason: string };

async function answerOf(res: Response): Promise<Answer> {
  const text = await res.text().catch(() => '');
  let reason = res.headers.get('x-influxdb-error') ?? '';
  if (reason === '') {
    try {
      const body = JSON.parse(text) as { error?: unknown; message?: unknown };
      const said = body.error ?? body.message;
      reason = typeof said === 'string' ? said : text;
    } catch {
      reason = text;
    }
  }
  const short = reason.replace(/\s+/g, ' ').trim().slice(0, 200);
  return { status: res.status, reason: `${String(res.status)} ${res.statusText}${short === '' ? '' : `: ${short}`}` };
}

/** Why no answer came, without the request (its headers hold the credentials). */
function unreachable(err: unknown, url: string): Error {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : err instanceof Error ? err.message : String(err);
  return new Error(`no answer from ${new URL(url).origin}: ${cause}`);
}

/** Writes runs to InfluxDB, one POST a batch; `log` says a run passed over for good. */
export function influxdbOutlet(settings: InfluxdbSettings, log: (line: string) => void): Outlet {
  const { url, headers } = writeRequest(settings);
  const closed = new AbortController();
  const post = async (runs: readonly NumberedRun[]): Promise<Answer> => {
    let res: Response;
    try {
      res = await fetch(url, { method: 'POST', headers, body: pointLines(runs), signal: AbortSignal.any([closed.signal, AbortSignal.timeout(WRITE_TIMEOUT_MS)]) });
    } catch (err) {
      throw unreachable(err, url);
    }
    if (res.ok) {
      await res.body?.cancel();
      return { status: res.status, reason: '' };
    }
    return answerOf(res);
  };
  /** A batch refused for good is tried a run at a time, so only the runs at fault are passed over. */
  const write = async (runs: readonly NumberedRun[]): Promise<void> => {
    const answer = await post(runs);
    if (answer.status < 300) return;
    if (!REFUSED_FOR_GOOD.has(answer.status)) throw new Error(answer.reason);
    if (runs.length > 1) {
      for (const run of runs) await write([run]);
      return;
    }
    const run = runs[0];
    if (run !== undefined) log(`${INFLUXDB_OUTLET}: ${run.check} on ${run.server} at ${new Date(run.startedAt).toISOString()} refused for good (${answer.reason}); passed over, kept in the history`);
  };
  return {
    name: INFLUXDB_OUTLET,
    deliver: write,
    close: () => {
      closed.abort();
      return Promise.resolve();
    },
  };
}
