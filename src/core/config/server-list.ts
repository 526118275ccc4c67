// `NETDIAG_SERVERS`: the operator's deployments, one JSON array the same on every deployment, served
// at GET /v1/servers so the page and the command line can choose among them (docs/operations.md,
// "Several deployments"). Each origin is checked as the family origins are: it goes into the
// page's Content-Security-Policy, where a stray character would widen or split the policy.
import { SERVER_NAME, type ListedServer } from '../../common/servers.js';
import { invalid, type Parser } from './table.js';
import { literalFamily, policyOrigin } from './parsers.js';

/** More deployments than a page would time at once before a test (each gets a few round trips in parallel). */
const MAX_SERVERS = 32;
const MAX_LOCATION = 64;
const FIELDS = new Set(['name', 'url', 'location', 'families']);

/** A control character (C0, DEL or C1), which a page or terminal would draw as nothing or as a command. */
const hasControl = (text: string): boolean => /\p{Cc}/u.test(text);

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function familiesOf(value: unknown, at: string): ListedServer['families'] {
  if (value === undefined) return ['ipv4', 'ipv6'];
  if (!Array.isArray(value) || value.length === 0 || value.length > 2 || value.some((f) => f !== 'ipv4' && f !== 'ipv6') || new Set(value).size !== value.length) {
    invalid(`${at}: "families" must be ["ipv4"], ["ipv6"] or ["ipv4", "ipv6"]`);
  }
  return value as ListedServer['families'];
}

function serverOf(entry: unknown, index: number): ListedServer {
  const at = `entry ${String(index + 1)}`;
  if (!isRecord(entry)) invalid(`${at} must be an object with "name", "url" and "location"`);
  const extra = Object.keys(entry).find((key) => !FIELDS.has(key));
  if (extra !== undefined) invalid(`${at}: unknown field "${extra}" (the fields are name, url, location and families)`);
  const { name, url, location } = entry;
  if (typeof name !== 'string' || !SERVER_NAME.test(name)) invalid(`${at}: "name" must be 1 to 32 lowercase letters, digits and hyphens, starting with a letter or digit (it is what --server takes)`);
  if (typeof url !== 'string') invalid(`${at} ("${name}"): "url" must be the deployment's origin, such as https://fra.example.net`);
  let origin: string;
  try {
    origin = policyOrigin(url, `https://${name}.example.net`);
  } catch (err) {
    invalid(`${at} ("${name}"): ${(err as Error).message}`);
  }
  if (typeof location !== 'string' || location.trim() === '' || location.length > MAX_LOCATION || hasControl(location)) {
    invalid(`${at} ("${name}"): "location" must be 1 to ${String(MAX_LOCATION)} characters without control characters, such as "Frankfurt, DE"`);
  }
  // An address for a host answers over its own family only: that family when none is named, and
  // refused when the entry names another.
  const literal = literalFamily(origin);
  const families = literal !== undefined && entry.families === undefined ? [literal] : familiesOf(entry.families, `${at} ("${name}")`);
  if (literal !== undefined && (families.length !== 1 || families[0] !== literal)) {
    invalid(`${at} ("${name}"): "${origin}" is an ${literal === 'ipv4' ? 'IPv4' : 'IPv6'} address, so "families" must be ["${literal}"]`);
  }
  return { name, url: origin, location: location.trim(), families };
}

/** The list, each entry checked, names and origins unique. */
export const serverList: Parser<ListedServer[]> = (text) => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    invalid('must be a JSON array of {"name", "url", "location", "families"} objects');
  }
  if (!Array.isArray(parsed)) invalid('must be a JSON array of {"name", "url", "location", "families"} objects');
  if (parsed.length > MAX_SERVERS) invalid(`names ${String(parsed.length)} deployments; at most ${String(MAX_SERVERS)}`);
  const servers = parsed.map(serverOf);
  for (const key of ['name', 'url'] as const) {
    const seen = new Set<string>();
    for (const server of servers) {
      if (seen.has(server[key])) invalid(`names "${server[key]}" twice: each deployment's ${key} must be its own`);
      seen.add(server[key]);
    }
  }
  return servers;
};
