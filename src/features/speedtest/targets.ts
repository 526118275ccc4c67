import { CACHE } from '../../core/http/headers.js';
import { Problem } from '../../core/http/problems.js';
import { baseHeaders, bodyCutOffReply, problemReply } from '../../core/http/respond.js';
import type { RouteDefinition } from '../../core/http/router.js';
import type { HttpReply, RequestContext, StreamedBody } from '../../core/http/types.js';
import { counted, isRefusal, type TransferLedger } from '../../core/http/transfers.js';
import { MAX_BYTES_PER_REQUEST } from './configuration.js';

// The speed-test targets (docs/api.md, "Envelope, routes and limits"): `GET /__down?bytes=N` and
// `POST /__up`, with the contract of the speed-test library the configuration names (@cloudflare/speedtest), so its
// `downloadApiUrl` and `uploadApiUrl` can point here. The library times each transfer with the
// browser's Resource Timing, which a cross-origin page sees only with `Timing-Allow-Origin`, and
// subtracts the server's own time, which it reads from `Server-Timing: cfRequestDuration;dur=…`.

/** One zero-filled chunk, written again and again: the bytes are never read, only counted. */
const CHUNK = new Uint8Array(256 * 1024);

/** What a browser on another origin may read on these routes: the spec's list and Server-Timing. */
const EXPOSED = 'X-Request-ID, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, Server-Timing';

/**
 * `no-transform` as well as `no-store`: a proxy that compressed the download would make the
 * test measure its compressor (RFC 9111 §5.2.2.6).
 */
export const NO_STORE = `${CACHE.noStore}, no-transform`;

/**
 * `length` zero bytes, pulled one chunk of `chunkBytes` (at most 256 KiB) at a time: each runtime
 * writes the next only once the client took the last, so what waits unsent in the server is
 * about one chunk.
 */
export function zeros(length: number, chunkBytes = CHUNK.byteLength): StreamedBody {
  const chunk = CHUNK.subarray(0, Math.min(chunkBytes, CHUNK.byteLength));
  return {
    length,
    *chunks() {
      let left = length;
      while (left >= chunk.byteLength) {
        yield chunk;
        left -= chunk.byteLength;
      }
      if (left > 0) yield chunk.subarray(0, left);
    },
  };
}

/** The server's own time for this request, in the speed-test library's header (milliseconds, 3 decimals). */
function serverTiming(started: number): string {
  return `cfRequestDuration;dur=${(performance.now() - started).toFixed(3)}`;
}

/**
 * How an upload's body arrived, ms from when it began to: `body` to its end, and `body25`,
 * `body50`, `body75` to when a quarter, half and three quarters of its declared length had
 * (those only for a declared length, and each only when reached).
 */
interface BodyArrival {
  ms: number;
  quarters: readonly number[];
}

const QUARTER_NAMES = ['body25', 'body50', 'body75'];

function targetHeaders(ctx: RequestContext, started: number, body?: BodyArrival): string[] {
  const headers = baseHeaders(ctx, NO_STORE);
  // baseHeaders puts Access-Control-Expose-Headers at index 7; these routes also expose timing.
  headers[7] = EXPOSED;
  let timing = serverTiming(started);
  if (body !== undefined) {
    timing += `, body;dur=${body.ms.toFixed(3)}`;
    body.quarters.forEach((ms, i) => (timing += `, ${QUARTER_NAMES[i] ?? 'body'};dur=${ms.toFixed(3)}`));
  }
  headers.push('Server-Timing', timing, 'Timing-Allow-Origin', '*');
  return headers;
}

/**
 * `bytes` from the query: required, given once, a decimal whole number up to the maximum. Other
 * parameters (the speed-test library adds `measId` and `during`) are ignored.
 */
function requestedBytes(query: string): number {
  let found: string | undefined;
  for (const pair of query === '' ? [] : query.split('&')) {
    const eq = pair.indexOf('=');
    if ((eq === -1 ? pair : pair.slice(0, eq)) !== 'bytes') continue;
    if (found !== undefined) throw new Problem('invalid_parameter', 'The query parameter "bytes" must be given once.');
    found = eq === -1 ? '' : pair.slice(eq + 1);
  }
  if (found === undefined) throw new Problem('invalid_parameter', 'The query parameter "bytes" is required: the number of bytes to download.');
  if (!/^[0-9]{1,12}$/.test(found)) {
    throw new Problem('invalid_parameter', `The query parameter "bytes" must be a whole number from 0 to ${MAX_BYTES_PER_REQUEST}.`);
  }
  const bytes = Number(found);
  if (bytes > MAX_BYTES_PER_REQUEST) {
    throw new Problem('invalid_parameter', `The query parameter "bytes" is ${found}; this service sends at most ${MAX_BYTES_PER_REQUEST} bytes per request.`);
  }
  return bytes;
}

function download(ctx: RequestContext, ledger: TransferLedger): HttpReply {
  const started = performance.now();
  const bytes = requestedBytes(ctx.req.query);
  const transfer = ledger.begin(ctx);
  if (isRefusal(transfer)) return transfer;
  const headers = targetHeaders(ctx, started);
  headers.push('Content-Type', 'application/octet-stream', 'Content-Length', String(bytes));
  return { status: 200, headers, body: null, stream: counted(zeros(bytes), transfer) };
}

/** 413, and the connection closes: the rest of the body is not read (RFC 9110 §15.5.14). */
function tooLarge(ctx: RequestContext): HttpReply {
  const detail = `The upload is larger than the ${MAX_BYTES_PER_REQUEST} bytes this service reads per request.`;
  return { ...problemReply(ctx, 'payload_too_large', detail), close: true };
}

/**
 * Reads the whole body and keeps none of it; stops at the bound without reading further. A
 * client gone mid-upload (a page closed during its test) is answered, to nobody, like any cut
 * request body, not logged as a fault of ours.
 */
async function upload(ctx: RequestContext, ledger: TransferLedger): Promise<HttpReply> {
  const declared = ctx.req.header('content-length');
  if (declared !== undefined && Number(declared) > MAX_BYTES_PER_REQUEST) return tooLarge(ctx);
  const length = declared === undefined ? 0 : Number(declared);
  const marks = length >= 4 ? [length / 4, length / 2, (3 * length) / 4] : [];
  const transfer = ledger.begin(ctx);
  if (isRefusal(transfer)) return { ...transfer, close: true };
  // The body starts arriving as the request is handed over (it follows the head).
  const arriving = performance.now();
  const body = await ctx.req.drainBody(MAX_BYTES_PER_REQUEST, marks).finally(transfer.end);
  if (body.ok) transfer.moved(body.size);
  if (!body.ok) {
    if (body.reason === 'too_large') return tooLarge(ctx);
    return bodyCutOffReply(ctx);
  }
  // The speed-test library times the upload itself; the server's part is what follows the last byte. How
  // the body arrived goes beside it (`body;dur=`, and the quarters' `body25`..`body75`): a
  // client that loads the link with several uploads at once places each one's bytes in the time
  // they arrived (working.ts), and the quarters show how its share of the link changed within
  // one upload (four loss-based flows trade shares from second to second).
  const started = performance.now();
  const headers = targetHeaders(ctx, started, { ms: started - arriving, quarters: body.reached.map((t) => t - arriving) });
  headers.push('Content-Length', '0');
  return { status: 200, headers, body: null };
}

/**
 * With the targets turned off (`NETDIAG_SPEEDTEST_TARGETS=off`) the paths stay known and answer
 * 404 saying so, so a page or client shows why its test failed rather than a bare "not found".
 */
export function turnedOff(): never {
  throw new Problem('not_found', 'The speed-test targets are turned off on this service (NETDIAG_SPEEDTEST_TARGETS=off).');
}

/** The targets; `ledger` holds what each source has open and moved (core/http/transfers.ts). */
export function speedTestTargets(enabled: boolean, ledger: TransferLedger): RouteDefinition[] {
  if (!enabled) {
    return [
      { path: '/__down', GET: { limit: null, handle: turnedOff } },
      { path: '/__up', POST: { limit: null, handle: turnedOff } },
    ];
  }
  return [
    { path: '/__down', GET: { limit: 'speedtest', handle: (ctx) => download(ctx, ledger) } },
    { path: '/__up', POST: { limit: 'speedtest', handle: (ctx) => upload(ctx, ledger) } },
  ];
}
