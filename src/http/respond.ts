import type { Context } from 'hono';
import type { AppEnv } from './context.js';
import { EXPOSED_HEADERS } from './headers.js';
import { problemDocument, type ProblemCode } from './problems.js';

/** UTF-8 byte length without allocating an encoded copy (for Content-Length on GET and HEAD). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      // A surrogate pair is one 4-byte code point.
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** Headers every response carries: request id and CORS (SPEC-NOTES, "Every response"). */
export function baseHeaders(c: Context<AppEnv>, cacheControl: string): Record<string, string> {
  const state = c.var.state;
  return {
    'Cache-Control': cacheControl,
    'X-Request-ID': state.requestId,
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Expose-Headers': EXPOSED_HEADERS,
    ...state.rateHeaders,
  };
}

function jsonBody(
  c: Context<AppEnv>,
  status: number,
  body: string,
  contentType: string,
  cacheControl: string,
  extra?: Record<string, string>,
): Response {
  const headers = baseHeaders(c, cacheControl);
  headers['Content-Type'] = contentType;
  // Set explicitly so HEAD carries the same Content-Length the GET would (RFC 9110 §9.3.2).
  headers['Content-Length'] = String(utf8Length(body));
  if (extra) Object.assign(headers, extra);
  return new Response(body, { status, headers });
}

/** A success: `{ data, meta }` (spec §1 rule 3). */
export function envelope(c: Context<AppEnv>, data: unknown, cacheControl: string, status = 200): Response {
  const state = c.var.state;
  const body = JSON.stringify({
    data,
    meta: { api_version: 'v1', request_id: state.requestId, requested_at: new Date(state.receivedAt).toISOString() },
  });
  return jsonBody(c, status, body, 'application/json', cacheControl);
}

/** An RFC 9457 problem document; every error response is `no-store` (SPEC-NOTES). */
export function problem(
  c: Context<AppEnv>,
  code: ProblemCode,
  detail: string,
  base: string,
  extra?: Record<string, string>,
): Response {
  const doc = problemDocument(code, detail, base, c.var.state.requestId);
  return jsonBody(c, doc.status, JSON.stringify(doc), 'application/problem+json', 'no-store', extra);
}
