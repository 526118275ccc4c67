// A responsiveness configuration (draft-ietf-ippm-responsiveness: `{"version": 1, "urls": {...}}`,
// served at /.well-known/nq by netdiag and by any server that follows the draft), fetched and
// checked field by field so a URL that is not one says which field is wrong.
import { BodyTooLarge, boundedText } from '../api/bounded-body.js';
import type { Fetcher } from '../api/client.js';

/** The three URLs a responsiveness test needs. */
export interface RpmUrls {
  small: URL;
  large: URL;
  upload: URL;
}

/** A configuration that cannot be used: the message names the field. */
export class RpmConfigError extends Error {}

/** Each URL under the draft's name, then the earlier `…_https_…` name macOS and the open clients read. */
const KEYS = {
  small: ['small_download_url', 'small_https_download_url'],
  large: ['large_download_url', 'large_https_download_url'],
  upload: ['upload_url', 'https_upload_url'],
} as const;

/** The most of a configuration read: a few hundred bytes is what one holds. */
const MAX_CONFIG_BYTES = 64 * 1024;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Why a configuration's plain-HTTP URL cannot be tested, and what to do. The draft's clients speak
 * HTTP/2 over TLS; netdiag rpm's probes on the load's own connections need it (HTTP/1.1 carries
 * one request at a time). A configuration fetched over plain HTTP is a server without TLS: it
 * needs a certificate, and docs/command-line.md ("How `rpm` measures") makes one for this machine.
 */
function notHttps(key: string, url: URL, configUrl: URL): RpmConfigError {
  if (configUrl.protocol === 'http:') {
    return new RpmConfigError(
      `${configUrl.origin} serves plain HTTP, and netdiag rpm needs HTTPS (the test runs over HTTP/2 with TLS). Serve netdiag with a certificate ` +
        `(NETDIAG_TLS_CERT and NETDIAG_TLS_KEY) and give --url https://${configUrl.host}; to make one for this machine with openssl and trust it ` +
        'with NODE_EXTRA_CA_CERTS, see docs/command-line.md, "How `rpm` measures"',
    );
  }
  return new RpmConfigError(`"urls.${key}" must be an https URL (the test runs over HTTP/2 with TLS), got ${url.protocol.replace(':', '')}: the server's configuration must name https:// URLs`);
}

/** The URLs of a parsed configuration, fetched from `configUrl`, or RpmConfigError naming the first field that is wrong. */
function rpmUrls(config: unknown, configUrl: URL): RpmUrls {
  if (!isObject(config)) throw new RpmConfigError('the configuration is not a JSON object');
  if (config.version !== 1) throw new RpmConfigError(`"version" must be 1, got ${config.version === undefined ? 'nothing' : JSON.stringify(config.version)}`);
  const urls = config.urls;
  if (!isObject(urls)) throw new RpmConfigError('"urls" must be an object with the test\'s URLs');
  const pick = (names: readonly [string, string]): URL => {
    const [name, older] = names;
    const key = urls[name] !== undefined ? name : urls[older] !== undefined ? older : undefined;
    if (key === undefined) throw new RpmConfigError(`"urls.${name}" is missing (nor is there "urls.${older}")`);
    const value = urls[key];
    if (typeof value !== 'string') throw new RpmConfigError(`"urls.${key}" must be a URL string, got ${JSON.stringify(value)}`);
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new RpmConfigError(`"urls.${key}" is not a URL: ${JSON.stringify(value.slice(0, 200))}`);
    }
    if (url.protocol !== 'https:') throw notHttps(key, url, configUrl);
    return url;
  };
  const found = { small: pick(KEYS.small), large: pick(KEYS.large), upload: pick(KEYS.upload) };
  // The draft: URLs on different hosts make the whole configuration one to ignore.
  const hosts = new Set([found.small.host, found.large.host, found.upload.host]);
  if (hosts.size > 1) throw new RpmConfigError(`the three URLs must share one host, got ${[...hosts].join(', ')}`);
  return found;
}

/**
 * The origin the test's load goes to: the configuration's own, or one the user allowed
 * (`--allow-origin`). A configuration is the server's word, and one that names URLs elsewhere
 * (another host, port or scheme, an internal address) would aim 150 requests and an upload of
 * gigabytes at a place the user never named; the three URLs share one origin (rpmUrls).
 */
function loadOrigin(urls: RpmUrls, configUrl: string, allowed: readonly string[]): string {
  const own = new URL(configUrl).origin;
  const origin = urls.small.origin;
  if (urls.large.origin !== origin || urls.upload.origin !== origin) throw new RpmConfigError(`the three URLs must share one origin, got ${[...new Set([urls.small.origin, urls.large.origin, urls.upload.origin])].join(', ')}`);
  if (origin === own || allowed.includes(origin)) return origin;
  throw new RpmConfigError(`the configuration ${configUrl} sends the test's load to ${origin}, not to ${own}: netdiag rpm loads only the server you name. To test ${origin}, give its configuration (--config ${origin}/.well-known/nq), or let this one send the load there with --allow-origin ${origin}`);
}

/** Fetches (with `send`: bound as the test's connections are) and checks the configuration at `url`, within `timeoutMs`; its URLs and the origin they load. */
export async function fetchRpmConfig(url: string, timeoutMs: number, allowedOrigins: readonly string[] = [], send: Fetcher = fetch): Promise<RpmUrls & { origin: string }> {
  let res: Response;
  try {
    res = await send(url, { headers: { Accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    // undici's words for a server that closed at a plain request: what an HTTPS port does.
    const closed = new URL(url).protocol === 'http:' && (err as { cause?: { code?: string } }).cause?.code === 'UND_ERR_SOCKET';
    const hint = closed ? `; a server that speaks HTTPS closes a plain http:// request like this: try https://${new URL(url).host}` : '';
    throw new RpmConfigError(`could not fetch the configuration ${url} (${err instanceof Error ? err.message : String(err)}${cause})${hint}`);
  }
  let text: string;
  try {
    text = await boundedText(res, MAX_CONFIG_BYTES);
  } catch (err) {
    if (err instanceof BodyTooLarge) throw new RpmConfigError(`the configuration ${url} is more than ${String(MAX_CONFIG_BYTES)} bytes, more than a configuration holds`);
    throw new RpmConfigError(`could not read the configuration ${url} (${err instanceof Error ? err.message : String(err)})`);
  }
  if (!res.ok) throw new RpmConfigError(`the configuration ${url} answered ${String(res.status)}${text === '' ? '' : `: ${text.slice(0, 200)}`}`);
  return readRpmConfig(text, url, allowedOrigins);
}

/** A configuration's text, fetched from `url`, checked: its URLs and the origin they load, or RpmConfigError naming what is wrong. */
export function readRpmConfig(text: string, url: string, allowedOrigins: readonly string[] = []): RpmUrls & { origin: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new RpmConfigError(`the configuration ${url} is not JSON`);
  }
  const urls = rpmUrls(parsed, new URL(url));
  return { ...urls, origin: loadOrigin(urls, url, allowedOrigins) };
}
