// The operator's server list as the command line reads it: GET /v1/servers of the --url
// deployment (docs/api.md; the shape is src/common/servers.ts's ListedServer). A deployment older
// than the list answers 404, read as an empty list. Every entry is checked before use: a name
// goes to a terminal and a URL is connected to, so a list that is not what the API promises is
// refused, naming the entry and what is wrong with it.
import type { Family } from '../../common/families.js';
import { SERVER_NAME, type ListedServer } from '../../common/servers.js';
import { ApiFailure, type Client } from '../api/client.js';

const FAMILIES: readonly Family[] = ['ipv4', 'ipv6'];

/** What is wrong with one entry of the list, or undefined when it is a ListedServer. */
function entryProblem(entry: unknown): string | undefined {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return 'is not an object';
  const { name, url, location, families } = entry as Record<string, unknown>;
  if (typeof name !== 'string' || !SERVER_NAME.test(name)) return 'has no name of lower-case letters, digits and hyphens';
  if (typeof url !== 'string' || originOf(url) !== url) return `("${name}") has no http(s) origin as its url`;
  if (typeof location !== 'string') return `("${name}") has no location`;
  if (!Array.isArray(families) || families.length === 0 || !families.every((f) => FAMILIES.includes(f as Family))) return `("${name}") has no families among ipv4, ipv6`;
  return undefined;
}

/** `text`'s origin when it is an http(s) URL, else undefined. */
function originOf(text: string): string | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** The deployment's list of servers; empty when it has none or predates the list (404). */
export async function listedServers(client: Client): Promise<ListedServer[]> {
  let data: { servers?: unknown };
  try {
    data = await client.get<{ servers?: unknown }>('/v1/servers');
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 404) return [];
    throw err;
  }
  if (!Array.isArray(data.servers)) throw new ApiFailure(`${client.base}/v1/servers answered without a list of servers; is this a netdiag server?`);
  const servers: unknown[] = data.servers;
  servers.forEach((entry, i) => {
    const problem = entryProblem(entry);
    if (problem !== undefined) throw new ApiFailure(`${client.base}/v1/servers: entry ${String(i + 1)} ${problem}`);
  });
  // Only the fields the contract names: anything else a server adds is not carried on.
  return (servers as ListedServer[]).map(({ name, url, location, families }) => ({ name, url, location, families }));
}
