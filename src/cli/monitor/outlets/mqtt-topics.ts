// Where a check on a server goes on the broker (docs/monitor.md, "MQTT and Home Assistant"): its
// names made topic levels and Home Assistant unique_ids, and the check at start that no two checks
// or servers are made the same ones, as their retained states and discovery configs would then
// overwrite each other on the broker without a word.

/** A name as a topic level and in a unique_id: lower case, each run of other characters one `_`. */
export const slug = (text: string): string => text.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '') || '_';

/** A server as a topic level: its host, port and path (the scheme left out, so two servers differing in it alone are refused at start). */
export function serverSlug(server: string): string {
  try {
    const url = new URL(server);
    return slug(`${url.host}${url.pathname}`);
  } catch {
    return slug(server);
  }
}

/** The part of a unique_id a check on a server owns; two pairs sharing it share their topics or their unique_ids. */
export const pairId = (check: string, server: string): string => `${slug(check)}_${serverSlug(server)}`;

/** A check on a server, by their places in the configuration's `checks` and `servers`. */
interface Pair {
  check: number;
  server: number;
}

/** The first two check-on-server pairs, in the file's order, that would publish as one (the `pairId` both make), or undefined. */
export function topicClash(checks: readonly string[], servers: readonly string[]): { first: Pair; second: Pair; id: string } | undefined {
  const owners = new Map<string, Pair>();
  for (const [check, name] of checks.entries()) {
    for (const [server, url] of servers.entries()) {
      // The same server named twice is one server, not two that clash.
      if (servers.indexOf(url) !== server) continue;
      const id = pairId(name, url);
      const first = owners.get(id);
      if (first !== undefined) return { first, second: { check, server }, id };
      owners.set(id, { check, server });
    }
  }
  return undefined;
}
