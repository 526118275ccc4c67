import type { HttpRequest } from '../../core/http/types.js';

/** The body bound for events (the API contract: 4 KiB). */
export const MAX_EVENT_BYTES = 4096;

type BodyRead = { ok: true; text: string } | { ok: false; reason: 'too_large' | 'not_utf8' | 'cut_off' };

/**
 * JSON text is UTF-8 (RFC 8259 §8.1); anything else is refused, not guessed at. One decoder
 * serves every request: a `decode` call without `stream` starts afresh, a fatal one included.
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Reads at most `limit` bytes. A declared Content-Length over the limit is refused before any
 * byte is read; otherwise chunks are counted as they arrive and reading stops at the first
 * chunk that passes the limit, whatever Content-Length said (docs/api.md: never read past the
 * bound).
 */
export async function readBoundedBody(req: HttpRequest, limit = MAX_EVENT_BYTES): Promise<BodyRead> {
  const declared = req.header('content-length');
  if (declared !== undefined && Number(declared) > limit) return { ok: false, reason: 'too_large' };
  // A client gone mid-body is answered (to nobody) rather than logged as a fault of ours.
  const body = await req.readBody(limit);
  if (!body.ok) return body;
  try {
    return { ok: true, text: UTF8.decode(body.bytes) };
  } catch {
    return { ok: false, reason: 'not_utf8' };
  }
}

/** `application/json`, with parameters allowed, but a charset other than UTF-8 is not JSON. */
export function isJsonMediaType(value: string | undefined): boolean {
  if (value === undefined) return false;
  const [type = '', ...params] = value.split(';');
  if (type.trim().toLowerCase() !== 'application/json') return false;
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq === -1) continue;
    const name = param.slice(0, eq).trim().toLowerCase();
    const val = param.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase();
    if (name === 'charset' && val !== 'utf-8' && val !== 'utf8') return false;
  }
  return true;
}
