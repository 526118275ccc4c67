// src/common/: rules the clients (the page, the command line's client code) share with the server;
// besides the contract's generated types, the one part of src/ a client may import; it imports nothing else.
// The operator's deployments (GET /v1/servers, NETDIAG_SERVERS) as the clients use them: one
// list, and one rule for "the nearest", so the page's choice and `--server auto` agree. The
// choice is the client's: the service stores nothing about it.
import { percentile } from './statistics.js';
import type { Family } from './families.js';

/** One deployment of the list: a short name to choose it by, its base URL, where it is, and the families it serves. */
export interface ListedServer {
  name: string;
  url: string;
  location: string;
  families: Family[];
}

/** A listed server's name, what `--server NAME` takes: short, lowercase, no spaces, so it is typed as easily as read. */
export const SERVER_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;

/** Round trips asked of each listed server before the nearest is picked: the first opens the connection and is not counted. */
export const NEAREST_ROUND_TRIPS = 5;

/** How long a listed server may take over its round trips before it counts as unreachable, ms. */
export const NEAREST_TIMEOUT_MS = 3000;

/** A listed server after its round trips: their median, or null when it did not answer them all. */
export interface TimedServer {
  server: ListedServer;
  medianMs: number | null;
}

/** The servers by median round trip, lowest first; those that did not answer last, in list order. */
export function byRoundTrip(timed: readonly TimedServer[]): TimedServer[] {
  return timed
    .map((t, i) => ({ t, i }))
    .sort((a, b) => (a.t.medianMs ?? Infinity) - (b.t.medianMs ?? Infinity) || a.i - b.i)
    .map(({ t }) => t);
}

/** The nearest server, or undefined when none answered. */
export function nearest(timed: readonly TimedServer[]): TimedServer | undefined {
  const first = byRoundTrip(timed)[0];
  return first?.medianMs === null ? undefined : first;
}

/** The median of a server's round trips, the connection-opening first one left out. */
export function roundTripMedian(trips: readonly number[]): number | null {
  const counted = trips.slice(1);
  return percentile(counted, 0.5) ?? null;
}
