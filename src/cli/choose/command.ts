// `netdiag servers`: the --url deployment's list of servers, each with its round trip from here by
// the rule `--server auto` chooses by (round-trips.ts), nearest first, those that did not answer
// last and marked; --json gives the same rows as an array.
import { byRoundTrip } from '../../common/servers.js';
import type { Client } from '../api/client.js';
import { print, printJson, table, type Output } from '../terminal/output.js';
import { listedServers } from './server-list.js';
import { timeServers, type Connecting, type Timed } from './round-trips.js';

/** A row as --json gives it: the listed server, its round trip (null when unreachable) and why not. */
interface ServerRow {
  name: string;
  url: string;
  location: string;
  families: string[];
  round_trip_ms: number | null;
  reachable: boolean;
  error: string | null;
}

const rowOf = ({ server, medianMs, error }: Timed): ServerRow => ({
  ...server,
  round_trip_ms: medianMs === null ? null : Math.round(medianMs * 1000) / 1000,
  reachable: medianMs !== null,
  error,
});

/** The list, timed and ordered; each round trip connects as `connecting` says (--source, -4 / -6). */
export async function serversCommand(client: Client, out: Output, connecting: Connecting = {}): Promise<void> {
  const servers = await listedServers(client);
  const rows = (byRoundTrip(await timeServers(servers, connecting)) as Timed[]).map(rowOf);
  if (out.json) {
    printJson(rows);
    return;
  }
  if (rows.length === 0) {
    print(`${client.base} lists no servers (its operator sets them in NETDIAG_SERVERS); --server auto measures against it.`);
    return;
  }
  print(
    table(out, [
      ['NAME', 'URL', 'LOCATION', 'FAMILIES', 'ROUND TRIP'],
      ...rows.map((r) => [r.name, r.url, r.location, r.families.join(' '), r.round_trip_ms === null ? `unreachable: ${r.error ?? ''}` : `${r.round_trip_ms.toFixed(1)} ms`]),
    ]),
  );
}
