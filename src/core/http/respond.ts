import { EXPOSED_HEADERS } from './headers.js';
import { wantsJson } from './pages.js';
import { problemDocument, type ProblemCode } from './problems.js';
import { isoTimestamp } from './timestamp.js';
import type { HttpReply, RequestContext } from './types.js';
import { printable } from './printable.js';

/** Printable ASCII, as every JSON.stringify output of ASCII data is (it escapes control characters). */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Where `utf8Length` has non-ASCII text encoded to count its bytes (3 bytes a UTF-16 unit at most). */
const SCRATCH = new Uint8Array(48 * 1024);
const ENCODER = new TextEncoder();

/** UTF-8 byte length without allocating an encoded copy (for Content-Length on GET and HEAD). */
export function utf8Length(text: string): number {
  // Nearly every body is ASCII, where bytes are characters: the regular expression runs in
  // V8's native matcher, several times faster than the loop below (docs/benchmarks.md, "Per-operation costs").
  if (PRINTABLE_ASCII.test(text)) return text.length;
  // Otherwise the platform's encoder counts, into a buffer kept for it: still faster than the loop
  // for a body with a few non-ASCII letters (a city's name in an echoip answer).
  // Encoding a lone surrogate as U+FFFD (3 bytes) is the encoder's rule and the loop's.
  if (text.length * 3 <= SCRATCH.length) return ENCODER.encodeInto(text, SCRATCH).written;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      // A surrogate pair is one 4-byte code point.
      bytes += 4;
      i++;
    } else bytes += 3; // Other BMP units; a lone surrogate is sent as U+FFFD, also 3 bytes.
  }
  return bytes;
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/**
 * Headers every response carries: request id, CORS (none on a same-origin route), and
 * RateLimit-* on limited routes (docs/api.md). A flat `[name, value, …]` list: Node's
 * `writeHead` takes it as it is, cheaper than an object (docs/benchmarks.md, "Per-operation costs").
 */
export function baseHeaders(ctx: Pick<RequestContext, 'rate' | 'requestId' | 'sameOrigin' | 'listedOrigin'>, cacheControl: string): string[] {
  const rate = ctx.rate;
  if (ctx.sameOrigin === true) {
    // A same-origin route (the TURN credentials): no CORS header, so other sites cannot read it;
    // a page on another of the operator's listed deployments may, its origin named (never `*`).
    const headers = ['Cache-Control', cacheControl, 'X-Request-ID', ctx.requestId];
    if (ctx.listedOrigin !== undefined) headers.push('Access-Control-Allow-Origin', ctx.listedOrigin, 'Access-Control-Expose-Headers', EXPOSED_HEADERS, 'Vary', 'Origin');
    if (rate === undefined) return headers;
    headers.push('RateLimit-Limit', rate.limit);
    if (rate.remaining !== undefined) headers.push('RateLimit-Remaining', rate.remaining);
    headers.push('RateLimit-Reset', rate.reset);
    return headers;
  }
  if (rate === undefined) {
    return ['Cache-Control', cacheControl, 'X-Request-ID', ctx.requestId, 'Access-Control-Allow-Origin', '*', 'Access-Control-Expose-Headers', EXPOSED_HEADERS];
  }
  const headers = [
    'Cache-Control', cacheControl,
    'X-Request-ID', ctx.requestId,
    'Access-Control-Allow-Origin', '*',
    'Access-Control-Expose-Headers', EXPOSED_HEADERS,
    'RateLimit-Limit', rate.limit,
  ];
  if (rate.remaining !== undefined) headers.push('RateLimit-Remaining', rate.remaining);
  headers.push('RateLimit-Reset', rate.reset);
  return headers;
}

export function jsonReply(
  ctx: Pick<RequestContext, 'rate' | 'requestId' | 'sameOrigin' | 'listedOrigin'>,
  status: number,
  body: string,
  contentType: string,
  cacheControl: string,
  extra?: Readonly<Record<string, string>>,
  bytes = utf8Length(body),
): HttpReply {
  const headers = baseHeaders(ctx, cacheControl);
  // Content-Length set explicitly so HEAD carries the one the GET would (RFC 9110 §9.3.2).
  headers.push('Content-Type', contentType, 'Content-Length', String(bytes));
  if (extra !== undefined) for (const name in extra) headers.push(name, extra[name] ?? '');
  return { status, headers, body };
}

/** The list as name/value pairs (for `new Headers()` and Node's HTTP/2 `writeHead`). */
export function headerPairs(headers: readonly string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i < headers.length; i += 2) pairs.push([headers[i] ?? '', headers[i + 1] ?? '']);
  return pairs;
}

/** Serialised JSON with its UTF-8 length, computed once for data that never changes. */
export interface Serialized {
  json: string;
  bytes: number;
}

export function serialize(data: unknown): Serialized {
  const json = JSON.stringify(data);
  return { json, bytes: utf8Length(json) };
}

/**
 * The envelope around the data, less the request id: timestamps are always 24 ASCII characters
 * (`isoTimestamp`), while the id is whatever the runtime's `newId` makes, so it is measured.
 */
const META_OVERHEAD = utf8Length(`{"data":,"meta":{"api_version":"v1","request_id":"","requested_at":"2000-01-01T00:00:00.000Z"}}`);

/**
 * A success: `{ data, meta }` (the API contract). Routes whose data never changes serialise it once
 * and each response only splices in its own `meta`.
 */
export function envelopeSerialized(ctx: RequestContext, data: Serialized, cacheControl: string, status = 200): HttpReply {
  // Request ids are UUIDs and timestamps ISO strings: neither needs JSON escaping.
  const idBytes = utf8Length(ctx.requestId);
  const body = `{"data":${data.json},"meta":{"api_version":"v1","request_id":"${ctx.requestId}","requested_at":"${isoTimestamp(ctx.receivedAt)}"}}`;
  return jsonReply(ctx, status, body, 'application/json', cacheControl, undefined, data.bytes + META_OVERHEAD + idBytes);
}

export function envelope(ctx: RequestContext, data: unknown, cacheControl: string, status = 200): HttpReply {
  return envelopeSerialized(ctx, serialize(data), cacheControl, status);
}

/**
 * An RFC 9457 problem document; every error response is `no-store` (docs/api.md). On the text
 * routes for curl (`ctx.plainProblems`) a client that names no JSON type gets the problem as one
 * line, `title: detail`, with the same status and headers: `curl host/city` prints a sentence,
 * not a JSON object.
 */
export function problemReply(ctx: RequestContext, code: ProblemCode, detail: string, extra?: Readonly<Record<string, string>>): HttpReply {
  const doc = problemDocument(code, detail, ctx.publicUrl ?? ctx.req.origin(), ctx.requestId);
  if (ctx.plainProblems === true) {
    const vary = { ...extra, Vary: 'Accept' };
    if (wantsJson(ctx)) return jsonReply(ctx, doc.status, JSON.stringify(doc), 'application/problem+json', 'no-store', vary);
    return jsonReply(ctx, doc.status, `${doc.title}: ${printable(doc.detail)}\n`, 'text/plain; charset=utf-8', 'no-store', vary);
  }
  return jsonReply(ctx, doc.status, JSON.stringify(doc), 'application/problem+json', 'no-store', extra);
}

/**
 * A request body that ended before its declared end: the client went away mid-body, an ordinary
 * event on the internet rather than a fault of ours, so it is answered (to nobody, the
 * connection closed) instead of logged as one.
 */
export function bodyCutOffReply(ctx: RequestContext): HttpReply {
  return { ...problemReply(ctx, 'malformed_request', 'The request body ended before its declared end.'), close: true };
}

/**
 * A problem answered outside the app (a request Node refused before parsing it, a fault in an
 * adapter): the same catalogue, document and headers as any other error (the API contract), for a request
 * that has no context. The connection is closed after it.
 */
export function detachedProblem(code: ProblemCode, detail: string, base: string, requestId: string): HttpReply {
  const doc = problemDocument(code, detail, base, requestId);
  return { ...jsonReply({ requestId, rate: undefined }, doc.status, JSON.stringify(doc), 'application/problem+json', 'no-store'), close: true };
}
