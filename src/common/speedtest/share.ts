// A speed-test result carried in a link's fragment, so sharing it needs no server to keep it:
// `https://host/#r=1~…`. Browsers never send the fragment (RFC 3986 §3.5; Fetch strips it), so
// the result goes from one person to another and never to the deployment. The page makes and
// reads the links, `netdiag speedtest --share` makes them; both with this one codec.
//
// Version 1 is positional, `~`-separated (unreserved in URLs, so copied links stay intact, and in
// no field's alphabet): version, time (Unix seconds), mode (l or f), download and upload (bit/s),
// idle latency, jitter, latency under load down and up (each in µs), packet loss (1/100 %), and
// the caller's address only when the person chose to include it, and then, when it was measured,
// the responsiveness estimate (whole RPM; links made before it have eleven fields and still
// read), then, when the test said them, the listed server it ran against (its name), its streams
// and its address family (4 or 6). Numbers are base 36; an empty field is a figure that was not
// measured, and trailing empty fields after the twelfth are left off. The page shows its own figures at this precision
// (`toShared`), so a shared copy reads exactly as the original did.

import { MAX_STREAMS } from './working.js';
import { SERVER_NAME } from '../servers.js';

export interface SharedResult {
  /** When the test ran, ms since the epoch (kept to the second). */
  at: number;
  mode: 'light' | 'full';
  downloadBps?: number;
  uploadBps?: number;
  latencyMs?: number;
  jitterMs?: number;
  loadedDownMs?: number;
  loadedUpMs?: number;
  lossPercent?: number;
  address?: string;
  /** The page's responsiveness estimate, whole RPM (src/common/responsiveness/rpm.ts loadedRpmEstimate). */
  rpm?: number;
  /** The listed server (src/common/servers.ts) the test ran against, by name; none when it ran against the deployment that made the link. */
  server?: string;
  /** The load's parallel streams (1..MAX_STREAMS). */
  streams?: number;
  /** The address family the test was held to, when one was chosen. */
  family?: 'ipv4' | 'ipv6';
}

const VERSION = '1';
const FIELDS = 11;
/** With the responsiveness estimate after the address, then the server, the streams and the family. */
const FIELDS_MOST = 15;
/** Bounds of what a link may carry, past which it is refused rather than shown. */
const MAX = { bps: 1e12, micros: 3_600_000_000, loss: 100_00, rpm: 60_000_000 } as const;

/** A rate as a link keeps it: whole bits per second. */
export const sharedBps = (bps: number): number => Math.round(bps);
/** A round trip as a link keeps it: whole microseconds. */
export const sharedMs = (ms: number): number => Math.round(ms * 1000) / 1000;
const ADDRESS = /^(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}|[0-9a-f:.]{2,45})$/;

const put = (value: number | undefined, scale: number): string => (value === undefined ? '' : Math.round(value * scale).toString(36));

/** The fragment's value (after `#r=`) for a result. */
export function encodeResult(result: SharedResult): string {
  const setup = [result.server ?? '', put(result.streams, 1), result.family === undefined ? '' : result.family === 'ipv4' ? '4' : '6'];
  while (setup.at(-1) === '') setup.pop();
  const rpm = put(result.rpm, 1);
  return [
    VERSION,
    Math.floor(result.at / 1000).toString(36),
    result.mode === 'light' ? 'l' : 'f',
    put(result.downloadBps, 1),
    put(result.uploadBps, 1),
    put(result.latencyMs, 1000),
    put(result.jitterMs, 1000),
    put(result.loadedDownMs, 1000),
    put(result.loadedUpMs, 1000),
    put(result.lossPercent, 100),
    result.address ?? '',
    ...(rpm === '' && setup.length === 0 ? [] : [rpm]),
    ...setup,
  ].join('~');
}

/** A link to `page` (the deployment's page URL) carrying `result`. */
export function shareLink(page: string, result: SharedResult): string {
  const url = new URL(page);
  url.hash = `r=${encodeResult(result)}`;
  return url.href;
}

type Decoded = { ok: true; result: SharedResult } | { ok: false; reason: string };

/** Reads a fragment's value; a link that does not decode says which part is wrong. */
export function decodeResult(text: string): Decoded {
  const parts = text.split('~');
  if (parts[0] !== VERSION) return { ok: false, reason: `it is not a version ${VERSION} result (a newer netdiag may have made it)` };
  if (parts.length < FIELDS || parts.length > FIELDS_MOST) return { ok: false, reason: `it has ${String(parts.length)} parts where a version ${VERSION} result has ${String(FIELDS)} to ${String(FIELDS_MOST)} (cut short when copied?)` };
  const [, at, mode, down, up, latency, jitter, loadedDown, loadedUp, loss, address, rpm = '', server = '', streams = '', family = ''] = parts as [string, string, string, string, string, string, string, string, string, string, string, ...(string | undefined)[]];
  const number = (field: string, name: string, max: number, scale: number): number | undefined => {
    if (field === '') return undefined;
    if (!/^[0-9a-z]{1,12}$/.test(field)) throw new Error(`its ${name} is not a number`);
    const value = parseInt(field, 36);
    if (value > max) throw new Error(`its ${name} is out of range`);
    return value / scale;
  };
  try {
    const seconds = number(at, 'time', 4_102_444_800, 1);
    if (seconds === undefined) throw new Error('it has no time');
    if (mode !== 'l' && mode !== 'f') throw new Error('its mode is neither light nor full');
    if (address !== '' && !ADDRESS.test(address)) throw new Error('its address is not an IP address');
    const result: SharedResult = { at: seconds * 1000, mode: mode === 'l' ? 'light' : 'full' };
    const set = <K extends keyof SharedResult>(key: K, value: SharedResult[K] | undefined) => {
      if (value !== undefined) result[key] = value;
    };
    set('downloadBps', number(down, 'download', MAX.bps, 1));
    set('uploadBps', number(up, 'upload', MAX.bps, 1));
    set('latencyMs', number(latency, 'latency', MAX.micros, 1000));
    set('jitterMs', number(jitter, 'jitter', MAX.micros, 1000));
    set('loadedDownMs', number(loadedDown, 'latency under load (down)', MAX.micros, 1000));
    set('loadedUpMs', number(loadedUp, 'latency under load (up)', MAX.micros, 1000));
    set('lossPercent', number(loss, 'packet loss', MAX.loss, 100));
    set('rpm', number(rpm, 'responsiveness', MAX.rpm, 1));
    if (server !== '' && !SERVER_NAME.test(server)) throw new Error('its server is not a server name');
    if (server !== '') result.server = server;
    const streamCount = number(streams, 'stream count', MAX_STREAMS, 1);
    if (streamCount === 0) throw new Error('its stream count is out of range');
    set('streams', streamCount);
    if (family !== '' && family !== '4' && family !== '6') throw new Error('its family is neither 4 nor 6');
    if (family !== '') result.family = family === '4' ? 'ipv4' : 'ipv6';
    if (address !== '') result.address = address;
    return { ok: true, result };
  } catch (err) {
    return { ok: false, reason: err instanceof Error ? err.message : String(err) };
  }
}
