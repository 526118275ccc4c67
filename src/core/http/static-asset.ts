// Answers that are the same bytes for everyone (the page's script and style, the OpenAPI
// document), served as a web server serves files: compressed ahead of time (Brotli and gzip, by
// scripts/generate.mjs) and chosen by the client's Accept-Encoding (RFC 9110 §12.5.3), with an
// entity tag per representation (§8.8.3: a content-coded form is a representation of its own)
// and a 304 for a client that already holds it (§13.1.2, If-None-Match, weak comparison).
import Negotiator from 'negotiator';
import { baseHeaders, jsonReply, utf8Length } from './respond.js';
import type { HttpReply, RequestContext } from './types.js';
import { listHead } from '../header-cap.js';

/** An asset as the build left it: its text, and each encoding's bytes as base64. */
export interface PrecompressedAsset {
  text: string;
  /** Quoted strong tag of the text (a hash of it), e.g. `"a1b2…"`; each encoding adds a suffix. */
  etag: string;
  br: string;
  gzip: string;
}

type Coding = 'br' | 'gzip' | 'identity';

/** A text coded as Brotli or gzip, by the runtime (src/runtime/node/adapter/compress.ts). */
export type TextCompressor = (text: string, coding: Exclude<Coding, 'identity'>) => Uint8Array;

interface Representation {
  etag: string;
  /** The encoded bytes; undefined for identity, which is sent as the text. */
  bytes: Uint8Array | undefined;
}

/** The encodings offered, best first: Brotli is the smaller of the two for text; between codings a client weighs alike, this order decides (negotiator's `preferred`). */
const OFFERED: readonly Coding[] = ['br', 'gzip', 'identity'];

/** negotiator 1.x's encoding(), whose `preferred` option its type package (for 0.6) does not know yet. */
interface EncodingNegotiator {
  encoding(available: readonly Coding[], options: { preferred: readonly Coding[] }): Coding | undefined;
}

/** Base64 to bytes, with only what both runtimes have (atob). */
function decode(base64: string): Uint8Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const tagged = (etag: string, suffix: string): string => `${etag.slice(0, -1)}-${suffix}"`;

/** Whether If-None-Match names this representation (or any, `*`): weak comparison, so a `W/` prefix matches too. */
export function matches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  return listHead(ifNoneMatch).split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** The coding the client takes that is best of ours (Brotli, gzip, or none). */
export function chosenCoding(ctx: Pick<RequestContext, 'req'>): Coding {
  const accepted = ctx.req.header('accept-encoding');
  // No header: identity (RFC 9110 §12.5.3: the client is then taken to accept any coding, but
  // a client that names none most often decodes none; curl without --compressed, say).
  if (accepted === undefined) return 'identity';
  return (new Negotiator({ headers: { 'accept-encoding': listHead(accepted) } }) as unknown as EncodingNegotiator).encoding(OFFERED, { preferred: OFFERED }) ?? 'identity';
}

/** A reply whose body is `bytes` already coded by `coding`: the runtimes write them as they are. */
export function encodedReply(reply: HttpReply, coding: Exclude<Coding, 'identity'>, bytes: Uint8Array): HttpReply {
  // Content-Length is the coded body's, replacing the text's.
  const headers = [...reply.headers];
  const at = headers.indexOf('Content-Length');
  if (at !== -1) headers[at + 1] = String(bytes.byteLength);
  headers.push('Content-Encoding', coding);
  return { ...reply, headers, body: null, stream: { length: bytes.byteLength, chunks: () => [bytes][Symbol.iterator]() }, encoded: true };
}

/**
 * A route handler for an asset: the text (identity) when the client takes no encoding of ours, or
 * Brotli or gzip when it does, each with its own ETag; a 304 when the client's copy is current.
 * `Vary: Accept-Encoding`, so a shared cache keeps the forms apart.
 */
export function assetHandler(asset: PrecompressedAsset, contentType: string, cacheControl: string, extra: Readonly<Record<string, string>> = {}): (ctx: RequestContext) => HttpReply {
  const forms: Readonly<Record<Coding, Representation>> = {
    br: { etag: tagged(asset.etag, 'br'), bytes: decode(asset.br) },
    gzip: { etag: tagged(asset.etag, 'gzip'), bytes: decode(asset.gzip) },
    identity: { etag: asset.etag, bytes: undefined },
  };
  // Counted once: a catalogue is mostly non-ASCII, counted byte by byte, and the script is 108 kB.
  const textBytes = utf8Length(asset.text);
  return (ctx) => {
    const coding = chosenCoding(ctx);
    const form = forms[coding];
    const headers = { ...extra, ETag: form.etag, Vary: 'Accept-Encoding' };
    const ifNoneMatch = ctx.req.header('if-none-match');
    if (ifNoneMatch !== undefined && matches(ifNoneMatch, form.etag)) {
      const notModified = baseHeaders(ctx, cacheControl);
      for (const name in headers) notModified.push(name, headers[name as keyof typeof headers]);
      return { status: 304, headers: notModified, body: null };
    }
    const reply = jsonReply(ctx, 200, asset.text, contentType, cacheControl, headers, textBytes);
    return form.bytes === undefined || coding === 'identity' ? reply : encodedReply(reply, coding, form.bytes);
  };
}
