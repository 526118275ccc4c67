// `influxdb:` in the monitor's configuration (docs/monitor.md, "InfluxDB"): where each run is
// written as line protocol. InfluxDB 1.x is named by its database (`/write?db=`), 2.x by its
// organisation and bucket with a token (`/api/v2/write`); a section naming both is refused, as the
// server would take only one of them.
import type { SectionReader } from '../section-reader.js';

/** InfluxDB 1.x: `/write` into a database, with HTTP basic credentials when its auth is on. */
interface InfluxdbV1 {
  version: 1;
  url: string;
  database: string;
  /** The retention policy written to (`rp=`), or null for the database's default. */
  retentionPolicy: string | null;
  /** Both or neither: 1.x takes them as HTTP basic authentication. */
  username: string | null;
  password: string | null;
}

/** InfluxDB 2.x (or 1.8+'s compatibility API): `/api/v2/write` into an organisation's bucket, with a token. */
interface InfluxdbV2 {
  version: 2;
  url: string;
  org: string;
  bucket: string;
  token: string;
}

export type InfluxdbSettings = InfluxdbV1 | InfluxdbV2;

const V1_KEYS = ['database', 'retention_policy', 'username', 'password'] as const;
const V2_KEYS = ['org', 'bucket', 'token'] as const;
const KNOWN = ['url', ...V1_KEYS, ...V2_KEYS];

/** The `influxdb:` section, each fault naming its line and field. */
export function parseInfluxdbSettings(read: SectionReader): InfluxdbSettings {
  for (const key of read.keys([])) {
    if (!KNOWN.includes(key)) read.fail([key], `not a setting here (${KNOWN.join(', ')})`);
  }
  const url = serverUrl(read);
  const v1 = V1_KEYS.filter((k) => read.has([k]));
  const v2 = V2_KEYS.filter((k) => read.has([k]));
  if (v1.length > 0 && v2.length > 0) {
    return read.fail([v2[0] ?? 'org'], `${v1.join(', ')} (InfluxDB 1.x) and ${v2.join(', ')} (2.x) are mixed: give database (and username, password, retention_policy) for 1.x, or org, bucket and token for 2.x`);
  }
  if (v2.length > 0) {
    const missing = V2_KEYS.filter((k) => !v2.includes(k));
    if (missing.length > 0) return read.fail([], `InfluxDB 2.x needs org, bucket and token: ${missing.join(' and ')} missing`);
    return { version: 2, url, org: read.text(['org']), bucket: read.text(['bucket']), token: read.text(['token']) };
  }
  if (!read.has(['database'])) return read.fail([], 'database missing: give database (InfluxDB 1.x) or org, bucket and token (2.x)');
  const optional = (key: string) => (read.has([key]) ? read.text([key]) : null);
  const username = optional('username');
  const password = optional('password');
  if ((username === null) !== (password === null)) {
    const [given, missing] = username === null ? ['password', 'username'] : ['username', 'password'];
    return read.fail([given], `given without ${missing}: InfluxDB 1.x takes both or neither`);
  }
  return { version: 1, url, database: read.text(['database']), retentionPolicy: optional('retention_policy'), username, password };
}

/** `url`: the server's http(s) base, a path prefix kept (a reverse proxy's); credentials belong in their own settings, where they are never logged. */
function serverUrl(read: SectionReader): string {
  const text = read.text(['url']);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return read.fail(['url'], `"${text}" is not a URL (http://influxdb.lan:8086)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return read.fail(['url'], `"${text}" is not an http:// or https:// URL`);
  if (url.username !== '' || url.password !== '') return read.fail(['url'], 'carries credentials: give them as username and password (1.x) or token (2.x), which are never logged');
  if (url.search !== '' || url.hash !== '') return read.fail(['url'], 'must be the server\'s address alone, without a query or fragment: the database or bucket has its own setting');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
