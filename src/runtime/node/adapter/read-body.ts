import type { Readable } from 'node:stream';
import { CUT_OFF, EMPTY_BODY, TOO_LARGE } from '../../../core/http/bounded-read.js';
import type { BodyBytes } from '../../../core/http/types.js';

/**
 * Reads a request body from its own `data` and `end` events. A small body (an analytics event)
 * usually arrives in the segment that carried the headers, so both events fire within the
 * parser's run that delivered the request, and this costs one promise; the stream's async
 * iterator costs a promise and an async-generator step per chunk and per end, about a third of
 * the events route's CPU (docs/benchmarks.md, "Distinct callers, DNS transports, memory").
 *
 * At the first chunk past `limit` reading stops and the stream is paused: nothing past the
 * bound is held, and the connection stays open for the 413, which then closes it. A request
 * that closes before its end is a client gone mid-body (`cut_off`). Every listener is removed
 * once settled; IncomingMessage emits `error` only while someone listens for it, so none is
 * left to throw.
 */
export function readNodeBody(incoming: Readable, limit: number): Promise<BodyBytes> {
  if (incoming.readableEnded) return Promise.resolve(EMPTY_BODY);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (result: BodyBytes): void => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onCut);
      incoming.off('close', onCut);
      resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.byteLength;
      if (size > limit) {
        incoming.pause();
        settle(TOO_LARGE);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      settle(chunks.length === 1 ? { ok: true, bytes: chunks[0] as Buffer } : { ok: true, bytes: Buffer.concat(chunks, size) });
    };
    const onCut = (): void => {
      settle(CUT_OFF);
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onCut);
    incoming.on('close', onCut);
  });
}
