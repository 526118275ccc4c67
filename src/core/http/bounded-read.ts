import type { BodyBytes, BodyDrained, BodyRefusal } from './types.js';

/**
 * Pulls a byte stream to its end, handing each chunk to `take`, and returns its size; or stops
 * at the first chunk that takes it past `limit` bytes and returns undefined, that chunk not
 * taken. With `cancel`, the stream is then cancelled (a response body whose connection should be
 * freed); without it the reader just stops pulling, because returning a request's iterator
 * destroys the request, and with it the connection a 413 must go out on.
 */
async function pullAtMost(stream: AsyncIterable<Uint8Array>, limit: number, cancel: boolean, take: (chunk: Uint8Array) => void): Promise<number | undefined> {
  const iterator = stream[Symbol.asyncIterator]();
  let size = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done === true) return size;
    size += next.value.byteLength;
    if (size > limit) {
      if (cancel) await iterator.return?.();
      return undefined;
    }
    take(next.value);
  }
}

/** Reads a byte stream whole, as `pullAtMost` bounds it: nothing past the bound is ever held. */
export async function readAtMost(stream: AsyncIterable<Uint8Array>, limit: number, cancel = false): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  const size = await pullAtMost(stream, limit, cancel, (chunk) => chunks.push(chunk));
  if (size === undefined) return undefined;
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** The outcomes every runtime's `readBody` shares (immutable: no caller writes to them). */
export const EMPTY_BODY: BodyBytes = { ok: true, bytes: new Uint8Array(0) };
export const TOO_LARGE: BodyRefusal = { ok: false, reason: 'too_large' };
export const CUT_OFF: BodyRefusal = { ok: false, reason: 'cut_off' };

/**
 * A request body from a Web stream (`Request.body`; null for none), read as `readAtMost` does.
 * A stream that errors is a client gone mid-body (`cut_off`): an ordinary event on the internet.
 */
export async function readStreamBody(stream: AsyncIterable<Uint8Array> | null, limit: number): Promise<BodyBytes> {
  if (stream === null) return EMPTY_BODY;
  let bytes: Uint8Array | undefined;
  try {
    bytes = await readAtMost(stream, limit);
  } catch {
    return CUT_OFF;
  }
  return bytes === undefined ? TOO_LARGE : { ok: true, bytes };
}

/**
 * A request body from a Web stream read to its end and dropped, counted up to `limit` (a
 * speed-test upload): the same outcomes as `readStreamBody`, holding one chunk at a time, and
 * the time the count first reached each of `marks` (rising byte counts), as chunks arrive.
 */
export async function drainStreamBody(stream: AsyncIterable<Uint8Array> | null, limit: number, marks: readonly number[] = []): Promise<BodyDrained> {
  const reached: number[] = [];
  if (stream === null) return { ok: true, size: 0, reached };
  let size: number | undefined;
  let counted = 0;
  try {
    size = await pullAtMost(stream, limit, false, (chunk) => {
      counted += chunk.byteLength;
      while (reached.length < marks.length && counted >= (marks[reached.length] ?? Infinity)) reached.push(performance.now());
    });
  } catch {
    return CUT_OFF;
  }
  return size === undefined ? TOO_LARGE : { ok: true, size, reached };
}
