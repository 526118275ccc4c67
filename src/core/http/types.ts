import type { ParsedAddress } from '../net/address.js';
import type { CallerResult } from '../net/caller-address.js';
import type { ConnectionFacts } from './connection.js';

/**
 * The request as the core sees it: what every runtime can provide cheaply. Node builds it
 * straight from `IncomingMessage`; `app.fetch` builds it from a Web-standard `Request`.
 */
export interface HttpRequest {
  method: string;
  /** The path, undecoded, without the query. */
  path: string;
  /** The raw query string without the leading `?` ('' when none). */
  query: string;
  /** A request header by lower-case name; repeated headers joined with ", ". */
  header(name: string): string | undefined;
  /**
   * `scheme://host` as the request named it, for problem `type` URIs when no public URL is set;
   * a function because only error responses need it.
   */
  origin(): string;
  /**
   * Reads the body whole, holding at most `limit` bytes: reading stops at the first chunk that
   * passes the bound. Each runtime reads in its own cheapest way (Node from the request's own
   * events, others from a Web stream); only routes that take a body call it, once, and
   * never together with `drainBody`.
   */
  readBody(limit: number): Promise<BodyBytes>;
  /**
   * Reads the body to its end and keeps none of it, counting bytes up to `limit` as `readBody`
   * does: for a body too large to hold (a speed-test upload). With `marks` (byte counts, rising),
   * it also notes when the count first reached each one (`performance.now()`). Called at most
   * once, never with `readBody`.
   */
  drainBody(limit: number, marks?: readonly number[]): Promise<BodyDrained>;
  /** What the runtime observed about the connection. */
  connection(): ConnectionFacts;
  /**
   * What is wrong with the request's framing, when the runtime found something the core must
   * refuse before routing (RFC 9112 §3.2: an HTTP/1.1 request without a Host field, or with
   * more than one, or with one that is not a host): answered 400 with a problem document.
   */
  readonly framingFault?: string;
}

/** A body read whole, or why it was not: past the bound, or the client went away mid-body. */
export type BodyBytes = { ok: true; bytes: Uint8Array } | BodyRefusal;

/**
 * A body read to its end and dropped: how many bytes it had and when each asked-for mark was
 * reached (`performance.now()`, one per mark the body reached), or why it was not read whole.
 */
export type BodyDrained = { ok: true; size: number; reached: number[] } | BodyRefusal;

/** Why a body was not read whole: past the bound, or the client went away mid-body. */
export interface BodyRefusal {
  ok: false;
  reason: 'too_large' | 'cut_off';
}

/**
 * A body too large to hold as one value (the speed-test download): `length` bytes in chunks,
 * pulled one at a time so each runtime writes them as fast as the client reads and no faster.
 */
export interface StreamedBody {
  length: number;
  chunks(): Iterator<Uint8Array>;
  /**
   * Written one chunk at a time, the next once the runtime has taken the last: at most a chunk
   * waits in the runtime's own buffers ahead of another response on the connection (the
   * responsiveness draft's self probe), where a stream's buffer would otherwise hold its high-water mark.
   */
  oneChunkQueued?: boolean;
  /**
   * Called once by the runtime when the body is over, however it ended: written whole, its client
   * gone, or never written (a HEAD request): what a transfer holds is let go here (transfers.ts).
   */
  done?(): void;
}

/** What the core answers; each runtime writes it in its own way. `body` null means no body. */
export interface HttpReply {
  status: number;
  /** Flat `[name, value, name, value, …]`, in the order they are written. */
  headers: string[];
  body: string | null;
  /** Written instead of `body` when present (never for HEAD). */
  stream?: StreamedBody;
  /**
   * The body is already content-coded (its Content-Encoding says how): a runtime that would code
   * a body itself by that header (Workers) must send these bytes as they are.
   */
  encoded?: boolean;
  /**
   * The request body was not read to its end (a 413 or 415): the runtime closes the connection
   * after this reply instead of reading the rest to reuse it (HTTP/1.1 `Connection: close`).
   */
  close?: boolean;
}

/** `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`, as header text. */
interface RateState {
  limit: string;
  /** Undefined when the store cannot tell (a platform binding): the header is then omitted. */
  remaining: string | undefined;
  reset: string;
}

/** Per-request state, created by the dispatcher and read by the helpers that build replies. */
export interface RequestContext {
  req: HttpRequest;
  requestId: string;
  /** Milliseconds since the epoch when the request was received. */
  receivedAt: number;
  /** `performance.now()` at receipt when metrics record (for the duration histogram), else 0. */
  startedAt: number;
  /** The configured base of problem `type` URIs; the request's origin when undefined. */
  publicUrl: string | undefined;
  /** Path parameters of the matched route. */
  params: Readonly<Record<string, string>>;
  /** The RateLimit-* values for limited routes, set by the rate-limit wrapper. */
  rate: RateState | undefined;
  /** The caller's source as the rate limit keys it (a keyed hash, never the address), set by the rate-limit wrapper. */
  sourceKey?: string;
  /** The caller address, resolved at most once per request. */
  caller: CallerResult | undefined;
  /**
   * The address a request asks about instead of its caller's (`?ip=`), parsed once by its route's
   * `accept` for the handler that follows; undefined when it asks about its caller.
   */
  askedAbout?: ParsedAddress;
  /**
   * Set by the pipeline for routes that answer curl in text (`/ip`, `/country`, …): a problem is
   * then one line of text unless the client's `Accept` names JSON (`RouteMethod.plainProblems`).
   */
  plainProblems?: true;
  /**
   * Set by the dispatcher for a route answered to its own origin only (`RouteDefinition.sameOrigin`):
   * the reply helpers then leave out `Access-Control-Allow-Origin` and the headers it exposes.
   */
  sameOrigin?: true;
  /**
   * On such a route, the request's `Origin` when it is one of the operator's listed deployments
   * (`NETDIAG_SERVERS`): a page served by another of them may read the answer, and only it.
   */
  listedOrigin?: string;
}

/** A route handler: synchronous where it can be, so the common path allocates no promise. */
export type Handler = (ctx: RequestContext) => HttpReply | Promise<HttpReply>;
