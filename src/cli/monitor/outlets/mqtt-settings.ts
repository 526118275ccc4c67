// `mqtt:` in the monitor's configuration (docs/monitor.md, "MQTT and Home Assistant"): the broker,
// its credentials and TLS, and the topics the runs and Home Assistant's discovery go to.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { SectionReader } from '../section-reader.js';

export interface MqttSettings {
  /** The broker, mqtt:// or mqtts:// (port 1883 or 8883 when the URL gives none), without credentials. */
  url: string;
  username: string | null;
  /** Given inline or read from `password_file` at start; never logged. */
  password: string | null;
  /** For mqtts://: the CA certificates the broker's is checked against (PEM, read at start), or null for the system's. */
  ca: string | null;
  /** For mqtts://: whether the broker's certificate is checked at all. */
  verify: boolean;
  /** Where the runs go: `<topicPrefix>/<id>/...`. */
  topicPrefix: string;
  /** Where Home Assistant looks for discovery configs, or null for none (`discovery_prefix: off`). */
  discoveryPrefix: string | null;
  /** The monitor's device in Home Assistant: its id (in topics and unique_ids) and the name shown. */
  id: string;
  name: string;
}

const KEYS = ['url', 'username', 'password', 'password_file', 'tls', 'topic_prefix', 'discovery_prefix', 'id', 'name'];
const TLS_KEYS = ['ca', 'verify'];
/** An MQTT topic level (MQTT 3.1.1 §4.7: `+`, `#` are wildcards, `/` separates levels): kept to what Home Assistant's discovery also takes (node_id, object_id: [a-zA-Z0-9_-]). */
const ID = /^[A-Za-z0-9_-]+$/;
/** A topic prefix: levels of the same, separated by `/`. */
const PREFIX = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/;

/** The `mqtt:` section, each fault naming its line and field. */
export function parseMqttSettings(read: SectionReader): MqttSettings {
  for (const key of read.keys([])) if (!KEYS.includes(key)) read.fail([key], `not a setting here (${KEYS.join(', ')})`);
  const url = brokerUrl(read);
  const tls = tlsOf(read, url.protocol === 'mqtts:');
  const id = read.has(['id']) ? matching(read, 'id', ID, 'letters, digits, _ and -') : defaultId();
  return {
    url: url.href,
    username: read.has(['username']) ? read.text(['username']) : null,
    password: passwordOf(read),
    ...tls,
    topicPrefix: read.has(['topic_prefix']) ? matching(read, 'topic_prefix', PREFIX, 'topic levels of letters, digits, _ and -, separated by /') : 'netdiag',
    discoveryPrefix: discoveryPrefixOf(read),
    id,
    name: read.has(['name']) ? read.text(['name']) : `netdiag monitor on ${hostname()}`,
  };
}

/** `url`: mqtt:// or mqtts:// with a host; credentials belong in username/password, so a log naming the broker never shows them. */
function brokerUrl(read: SectionReader): URL {
  const text = read.text(['url']);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return read.fail(['url'], `"${text}" is not a URL (mqtt://host[:port] or mqtts://host[:port])`);
  }
  if (url.protocol !== 'mqtt:' && url.protocol !== 'mqtts:') return read.fail(['url'], `${url.protocol}// is not a broker's scheme (mqtt:// or mqtts://)`);
  if (url.hostname === '') return read.fail(['url'], 'names no host (mqtt://host[:port])');
  if (url.username !== '' || url.password !== '') return read.fail(['url'], 'carries credentials: give them as username and password (or password_file)');
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') return read.fail(['url'], 'must be only a scheme, a host and a port (topics are topic_prefix)');
  return url;
}

/** `password` or `password_file` (its first line, so a secret need not sit in the configuration). */
function passwordOf(read: SectionReader): string | null {
  if (read.has(['password']) && read.has(['password_file'])) return read.fail(['password_file'], 'give password or password_file, not both');
  if (read.has(['password']) || read.has(['password_file'])) {
    if (!read.has(['username'])) return read.fail([read.has(['password']) ? 'password' : 'password_file'], 'a password needs a username');
  }
  if (read.has(['password'])) return read.text(['password']);
  if (!read.has(['password_file'])) return null;
  const file = read.text(['password_file']);
  try {
    const first = readFileSync(file, 'utf8').split(/\r?\n/)[0] ?? '';
    if (first === '') return read.fail(['password_file'], `${file} is empty (its first line is the password)`);
    return first;
  } catch (err) {
    return read.fail(['password_file'], `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

/** `tls:` (only with mqtts://): `ca` a PEM file, `verify` true (the default) or false. */
function tlsOf(read: SectionReader, secure: boolean): { ca: string | null; verify: boolean } {
  if (!read.has(['tls'])) return { ca: null, verify: true };
  if (!secure) return read.fail(['tls'], 'is for an mqtts:// broker; this url is mqtt://');
  for (const key of read.keys(['tls'])) if (!TLS_KEYS.includes(key)) read.fail(['tls', key], `not a setting here (${TLS_KEYS.join(', ')})`);
  let ca: string | null = null;
  if (read.has(['tls', 'ca'])) {
    const file = read.text(['tls', 'ca']);
    try {
      ca = readFileSync(file, 'utf8');
    } catch (err) {
      return read.fail(['tls', 'ca'], `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) return read.fail(['tls', 'ca'], `${file} holds no PEM certificate`);
  }
  const verify = read.has(['tls', 'verify']) ? read.value(['tls', 'verify']) : true;
  if (typeof verify !== 'boolean') return read.fail(['tls', 'verify'], `must be true or false, not ${JSON.stringify(verify)}`);
  return { ca, verify };
}

/** `discovery_prefix`: Home Assistant's (`homeassistant` by default), or `off` for no discovery configs. */
function discoveryPrefixOf(read: SectionReader): string | null {
  if (!read.has(['discovery_prefix'])) return 'homeassistant';
  const value = read.value(['discovery_prefix']);
  // YAML 1.2 reads off as text; YAML 1.1 habits write false.
  if (value === false || value === 'off') return null;
  return matching(read, 'discovery_prefix', PREFIX, 'topic levels of letters, digits, _ and -, separated by /, or off');
}

function matching(read: SectionReader, key: string, pattern: RegExp, accepted: string): string {
  const text = read.text([key]);
  if (!pattern.test(text)) return read.fail([key], `"${text}" is not usable in a topic (${accepted})`);
  return text;
}

/** This host's name as a topic level: one device per monitor, told apart by the machine it runs on. */
function defaultId(): string {
  const host = hostname().toLowerCase().replace(/[^a-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '');
  return `netdiag_${host === '' ? 'monitor' : host}`;
}
