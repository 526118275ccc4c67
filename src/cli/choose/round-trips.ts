// Each listed server's round trip by the one rule the page shares (src/common/servers.ts): all
// servers at once, and for each NEAREST_ROUND_TRIPS requests in turn for `/__down?bytes=0` (the
// speed-test target with nothing to send: what a test's own latency rounds ask) on one kept-alive
// connection, the first (which opens it) not counted, the median of the rest. A server that fails
// one of them, or takes longer than NEAREST_TIMEOUT_MS over all of them, is unreachable.
import { Client as OneConnection, fetch as undiciFetch } from 'undici';
import { MAX_API_BODY_BYTES, discardBounded } from '../api/bounded-body.js';
import { NEAREST_ROUND_TRIPS, NEAREST_TIMEOUT_MS, roundTripMedian, type ListedServer, type TimedServer } from '../../common/servers.js';
import { serverProcessingMs } from '../../common/speedtest/server-timing.js';
import type { Binding } from '../api/client.js';

/** A server after its round trips, with why it is unreachable when it is. */
export interface Timed extends TimedServer {
  /** Why it did not answer them all; null when it did. */
  error: string | null;
}

/** How the round trips connect: from this local address, over this family (`--source`, `-4` / `-6`: src/cli/api/source.ts). */
export type Connecting = Binding;

/** One round trip over `connection`: the time to the response's headers less the server's own; its (empty) body is read so the connection is kept for the next. */
async function roundTrip(connection: OneConnection, url: string, signal: AbortSignal): Promise<number> {
  const started = performance.now();
  // No redirect followed: a round trip to wherever a redirect leads is not this server's.
  const res = await undiciFetch(url, { dispatcher: connection, redirect: 'manual', signal, headers: { 'Cache-Control': 'no-store' } });
  // The server's own time taken out (its Server-Timing), as the page's Resource Timing reading
  // does: what is left is the path's, which is what "nearest" compares.
  const ms = Math.max(0, performance.now() - started - (serverProcessingMs(res.headers.get('server-timing')) ?? 0));
  await discardBounded(res as unknown as Response, MAX_API_BODY_BYTES);
  if (res.status !== 200) throw new Error(`it answered HTTP ${String(res.status)} for /__down (are its speed-test targets on?)`);
  return ms;
}

/** Why a round trip failed, in a few words. */
function failure(err: unknown, deadlineMs: number): string {
  if (err instanceof DOMException && (err.name === 'TimeoutError' || err.name === 'AbortError')) return `no answer within ${String(deadlineMs)} ms`;
  const cause = err instanceof Error ? (err.cause as { code?: string; message?: string } | undefined) : undefined;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

/**
 * One server's round trips, in turn, within `deadlineMs` for them all, over one connection: an
 * undici Client holds exactly one (the platform's fetch opened a second for the second request
 * while the first was still being released, and that round trip paid a handshake).
 */
async function timeOne(server: ListedServer, connecting: Connecting, deadlineMs: number): Promise<Timed> {
  const signal = AbortSignal.timeout(deadlineMs);
  const connection = new OneConnection(server.url, { ...(connecting.localAddress === undefined ? {} : { localAddress: connecting.localAddress }), connect: { timeout: deadlineMs, ...(connecting.family === undefined ? {} : { family: connecting.family }) } });
  const url = `${server.url}/__down?bytes=0`;
  const trips: number[] = [];
  try {
    for (let i = 0; i < NEAREST_ROUND_TRIPS; i++) trips.push(await roundTrip(connection, url, signal));
  } catch (err) {
    return { server, medianMs: null, error: failure(err, deadlineMs) };
  } finally {
    // Not waited for: a server that never answered must not hold the command up.
    connection.destroy().catch(() => undefined);
  }
  return { server, medianMs: roundTripMedian(trips), error: null };
}

/** Every server's round trip, in the list's order, each connection made as `connecting` says. */
export function timeServers(servers: readonly ListedServer[], connecting: Connecting = {}, deadlineMs = NEAREST_TIMEOUT_MS): Promise<Timed[]> {
  return Promise.all(servers.map((server) => timeOne(server, connecting, deadlineMs)));
}
