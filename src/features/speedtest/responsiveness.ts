import { baseHeaders, bodyCutOffReply, jsonReply, problemReply } from '../../core/http/respond.js';
import type { RouteDefinition } from '../../core/http/router.js';
import type { HttpReply, RequestContext } from '../../core/http/types.js';
import { counted, isRefusal, type TransferLedger } from '../../core/http/transfers.js';
import { NO_STORE, turnedOff, zeros } from './targets.js';

/**
 * The endpoints of the IETF draft "Responsiveness under Working Conditions"
 * (draft-ietf-ippm-responsiveness, its configuration section; docs/api.md "Responsiveness"), so any
 * client that follows it (macOS `networkQuality -C <url>`, goresponsiveness, networkquality-rs,
 * `netdiag rpm`) can measure against this server:
 * - `GET /.well-known/nq`: the configuration, with both key sets clients read today: the draft's
 *   (`small_download_url`, `large_download_url`, `upload_url`) and the earlier `…_https_…` ones
 *   that macOS, goresponsiveness and networkquality-rs read (the last will not parse a
 *   configuration without all six);
 * - `GET /nq/small`: one byte; `GET /nq/large`: zeros until the client closes; `POST /nq/upload`:
 *   reads whatever it is sent and keeps none of it.
 * Every URL names this server's own origin. No content coding on any (the draft's clients send
 * `Accept-Encoding: identity` and refuse a coded answer), no redirect, `no-store`, CORS as the
 * speed-test targets have it, and a rate limit of their own (`rpm`: a client probes many times a
 * second while it loads the link).
 */

const NQ_PATHS = { config: '/.well-known/nq', small: '/nq/small', large: '/nq/large', upload: '/nq/upload' } as const;

/** Whether `path` (a request's path, without its query) is one of the endpoints above. */
export function isResponsivenessPath(path: string): boolean {
  return (Object.values(NQ_PATHS) as string[]).includes(path);
}

/**
 * The large download's length and the most an upload may send: 8 GiB, what the draft asks of a
 * large object ("at least 8 GB"), more than a client moves in its 20 s at 3 Gbit/s. The
 * length is declared so a client sees a body it will not reach, and stops it by closing.
 */
const NQ_MAX_BYTES = 8 * 1024 ** 3;

const OCTETS = 'application/octet-stream';

/**
 * The headers of a probe or load answer: `Timing-Allow-Origin: *` beside CORS, so a page on another
 * listed deployment (`NETDIAG_SERVERS`) may read the Resource Timing of what it sends here, as it
 * may of the speed-test targets (W3C Resource Timing, "Cross-origin resources").
 */
function nqHeaders(ctx: RequestContext): string[] {
  const headers = baseHeaders(ctx, NO_STORE);
  headers.push('Timing-Allow-Origin', '*');
  return headers;
}

/** The configuration's URLs on `origin` (the public URL when the operator set one, else the request's own). */
function nqConfiguration(origin: string): { version: 1; urls: Record<string, string> } {
  const small = `${origin}${NQ_PATHS.small}`;
  const large = `${origin}${NQ_PATHS.large}`;
  const upload = `${origin}${NQ_PATHS.upload}`;
  return {
    version: 1,
    urls: {
      small_download_url: small,
      large_download_url: large,
      upload_url: upload,
      small_https_download_url: small,
      large_https_download_url: large,
      https_upload_url: upload,
    },
  };
}

function configuration(ctx: RequestContext): HttpReply {
  const origin = (ctx.publicUrl ?? ctx.req.origin()).replace(/\/+$/, '');
  return jsonReply(ctx, 200, JSON.stringify(nqConfiguration(origin)), 'application/json', NO_STORE);
}

function small(ctx: RequestContext): HttpReply {
  const headers = nqHeaders(ctx);
  headers.push('Content-Type', OCTETS, 'Content-Length', '1');
  return { status: 200, headers, body: '0' };
}

function large(ctx: RequestContext, ledger: TransferLedger): HttpReply {
  const transfer = ledger.begin(ctx);
  if (isRefusal(transfer)) return transfer;
  const headers = nqHeaders(ctx);
  headers.push('Content-Type', OCTETS, 'Content-Length', String(NQ_MAX_BYTES));
  // Written 16 KiB at a time, one chunk queued: a response asked for on the same HTTP/2
  // connection (a client's probe) waits behind what the server has queued, and a stream's own
  // buffer (64 KiB in Node 22) is 400 ms at a sixteenth of 20 Mbit/s (docs/design.md, "Responsiveness").
  return { status: 200, headers, body: null, stream: counted({ ...zeros(NQ_MAX_BYTES, 16 * 1024), oneChunkQueued: true }, transfer) };
}

/** 413, and the connection closes: the rest of the body is not read (RFC 9110 §15.5.14). */
function tooLarge(ctx: RequestContext): HttpReply {
  const detail = `The upload is larger than the ${String(NQ_MAX_BYTES)} bytes ${NQ_PATHS.upload} reads.`;
  return { ...problemReply(ctx, 'payload_too_large', detail), close: true };
}

async function upload(ctx: RequestContext, ledger: TransferLedger): Promise<HttpReply> {
  const declared = ctx.req.header('content-length');
  if (declared !== undefined && Number(declared) > NQ_MAX_BYTES) return tooLarge(ctx);
  const transfer = ledger.begin(ctx);
  if (isRefusal(transfer)) return { ...transfer, close: true };
  const body = await ctx.req.drainBody(NQ_MAX_BYTES).finally(transfer.end);
  if (body.ok) transfer.moved(body.size);
  if (!body.ok) return body.reason === 'too_large' ? tooLarge(ctx) : bodyCutOffReply(ctx);
  const headers = nqHeaders(ctx);
  headers.push('Content-Length', '0');
  return { status: 200, headers, body: null };
}

/**
 * The routes; with the speed-test targets turned off, these answer 404 saying so, as those do.
 * `ledger` holds what each source has open and moved, shared with the targets (core/http/transfers.ts).
 */
export function responsivenessRoutes(enabled: boolean, ledger: TransferLedger): RouteDefinition[] {
  if (!enabled) {
    return [
      { path: NQ_PATHS.config, GET: { limit: null, handle: turnedOff } },
      { path: NQ_PATHS.small, GET: { limit: null, handle: turnedOff } },
      { path: NQ_PATHS.large, GET: { limit: null, handle: turnedOff } },
      { path: NQ_PATHS.upload, POST: { limit: null, handle: turnedOff } },
    ];
  }
  return [
    { path: NQ_PATHS.config, GET: { limit: 'rpm', handle: configuration } },
    { path: NQ_PATHS.small, GET: { limit: 'rpm', handle: small } },
    { path: NQ_PATHS.large, GET: { limit: 'rpm', handle: (ctx) => large(ctx, ledger) } },
    { path: NQ_PATHS.upload, POST: { limit: 'rpm', handle: (ctx) => upload(ctx, ledger) } },
  ];
}
