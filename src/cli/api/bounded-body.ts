// A response body read whole only up to a bound. The command line trusts no server's sizes: an
// endless body would grow the process by gigabytes before a timeout could end it.

/** The body was longer than the reader takes; nothing past the bound was kept. */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`more than ${String(limit)} bytes`);
  }
}

/** Largest answer the client reads from the API: its biggest (a DNS answer of 50 TXT records) is about 110 kB. */
export const MAX_API_BODY_BYTES = 1024 * 1024;

/**
 * The body as UTF-8 text, or BodyTooLarge once it passes `limit` bytes: a declared length over it
 * is refused before reading, and an undeclared one (chunked, HTTP/2) is cut off as it arrives, the
 * stream cancelled so the connection stops carrying it.
 */
export async function boundedText(res: Response, limit: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (res.body === null) return '';
  if (declared > limit) {
    await res.body.cancel();
    throw new BodyTooLarge(limit);
  }
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      throw new BodyTooLarge(limit);
    }
    parts.push(value);
  }
  return Buffer.concat(parts).toString('utf8');
}

/** Reads and drops a body, up to `limit` bytes; past it the stream is cancelled. */
export async function discardBounded(res: Response, limit: number): Promise<void> {
  await boundedText(res, limit).catch((err: unknown) => {
    if (!(err instanceof BodyTooLarge)) throw err;
  });
}
