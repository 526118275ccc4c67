import { REGION_IDS } from '../../common/regions.js';

/** One problem code's entry in the catalogue below. */
export interface ProblemEntry {
  status: number;
  /** At most 100 characters (the API contract). */
  title: string;
  /** When the service answers with this problem: one or two sentences for a reader of the API. */
  when: string;
  /** What the client can do about it. */
  action: string;
}

/**
 * The error catalogue: every problem code the API can answer with, its status and title
 * (Fastify-style single table), and what `GET /problems/<code>` tells a reader about it: when it
 * happens and what to do (RFC 9457 §3.1.1: a `type` URI should resolve to documentation of the
 * problem type). RFC 9457 problem documents and those pages are built from it in one place.
 */
export const PROBLEMS = {
  malformed_request: {
    status: 400,
    title: 'Malformed request',
    when: 'The request could not be read as HTTP (a malformed request line or header), or its body ended before the length it declared, as when a client goes away mid-upload.',
    action: 'Send a well-formed HTTP/1.1 or HTTP/2 request; send a cut-off body again, whole.',
  },
  invalid_parameter: {
    status: 400,
    title: 'Invalid parameter',
    when: 'A query parameter is missing, repeated, or not a value the route accepts: for example a DNS name that is not a valid name, a record type outside A, AAAA, CNAME, MX, NS, TXT and PTR, a PTR lookup of something that is not an IP address, or a question about a special-use address\'s reverse zone (private, loopback and the like), which this server does not ask its resolver.',
    action: 'Correct the parameter that the detail names and send the request again; the API description (/v1/openapi.json) lists every parameter and its rules.',
  },
  unknown_region: {
    status: 400,
    title: 'Unknown region',
    when: 'The region in a latency probe path is not one of the seven region ids.',
    action: `Use one of ${REGION_IDS.join(', ')}; GET /v1/latency/regions lists them and which are available.`,
  },
  invalid_json: {
    status: 400,
    title: 'Invalid JSON body',
    when: 'The body of POST /v1/events is not valid UTF-8 or not valid JSON.',
    action: 'Send one JSON object, encoded as UTF-8.',
  },
  invalid_event: {
    status: 400,
    title: 'Invalid analytics event',
    when: 'The analytics event is valid JSON but not a valid event: an unknown event name, an event_id that is not a UUID, a missing field, an undeclared top-level field, or a property outside its type, values or bounds.',
    action: 'Fix the field the detail names; the AnalyticsEvent schema in /v1/openapi.json gives every field and bound.',
  },
  not_found: {
    status: 404,
    title: 'Not found',
    when: 'Nothing exists at the path: a mistyped path, an unknown problem code under /problems/, or a feature this deployment has turned off (the detail says which).',
    action: 'Check the path against /v1/openapi.json; every path of version 1 starts with /v1/.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    when: 'The path exists but does not answer this HTTP method.',
    action: 'Use one of the methods in the response\'s Allow header.',
  },
  request_timeout: {
    status: 408,
    title: 'Request timeout',
    when: 'The request\'s headers, or its whole body, did not arrive within the deadline the service allows a request; the connection is closed after this answer.',
    action: 'Send the request again over a new connection, at once and whole.',
  },
  payload_too_large: {
    status: 413,
    title: 'Request body too large',
    when: 'The request body is over its bound: 4096 bytes for an analytics event, or the most a speed-test upload accepts. Answered as soon as the declared length or the bytes received pass it; the rest of the body is not read.',
    action: 'Send a smaller body; an analytics event needs only its declared fields.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    when: 'The body of POST /v1/events is not declared as JSON: its Content-Type is missing or is not application/json.',
    action: 'Send the event with Content-Type: application/json (a charset=utf-8 parameter is fine).',
  },
  rate_limit_exceeded: {
    status: 429,
    title: 'Rate limit exceeded',
    when: 'This source has made more requests of this operation than its limit allows in the current 60-second window (the RateLimit-Limit header gives the limit), or holds as many speed-test and responsiveness transfers at once as it may, or has moved as many bytes through them this minute as it may (the detail says which).',
    action: 'Wait the number of seconds in the Retry-After header, then send the request again; poll less often.',
  },
  header_fields_too_large: {
    status: 431,
    title: 'Request header fields too large',
    when: 'The request\'s header block is larger than the service accepts; the connection is closed after this answer.',
    action: 'Send fewer or shorter headers (large cookies are the usual cause).',
  },
  internal_error: {
    status: 500,
    title: 'Internal server error',
    when: 'The service failed to handle the request, or is misconfigured. Nothing about the cause is revealed; the operator\'s log has it under the request_id.',
    action: 'Try again later; if it persists, tell the operator the request_id.',
  },
  upstream_invalid_response: {
    status: 502,
    title: 'Invalid upstream response',
    when: 'The DNS resolver sent a reply that is malformed, or that answers a different question than the one asked.',
    action: 'Try again later; if the same name keeps failing, its zone or the resolver is at fault, not the request.',
  },
  upstream_response_too_large: {
    status: 502,
    title: 'Upstream response too large',
    when: 'The DNS answer is over the service\'s bounds: more than 50 answers, a TXT value over 2048 characters, or a name over 253.',
    action: 'Nothing in the request can change it; ask a narrower question (another type or name) if one fits.',
  },
  upstream_unavailable: {
    status: 503,
    title: 'Upstream unavailable',
    when: 'The DNS resolver refused the connection, is unreachable or hung up, too many lookups are in flight, or its circuit is open after repeated failures of the resolver itself.',
    action: 'Try again in a few seconds; answers already cached are still served.',
  },
  connection_unavailable: {
    status: 503,
    title: 'Connection unavailable',
    when: 'The caller\'s address cannot be established: the service sits behind a trusted proxy that sent no usable forwarding header or PROXY protocol address.',
    action: 'Nothing on the client\'s side; the operator should check the proxy in front of the service.',
  },
  port_check_refused: {
    status: 403,
    title: 'Port check refused',
    when: 'The address the port check would connect to is special-use (loopback, private, link-local and the like) or one of the server\'s own: the caller\'s address as the server sees it is not the caller\'s own public address, as when the service sits behind a proxy, tunnel or address translation it was not told to trust.',
    action: 'Ask from the address whose port you want checked. An operator who sees this for every caller lists the proxy in front of the service in NETDIAG_TRUST_PROXY, so the caller\'s own address is used.',
  },
  probe_unavailable: {
    status: 503,
    title: 'Probe unavailable',
    when: 'This deployment has no probe for the region, or the region\'s probe is not answering.',
    action: 'Pick a region whose available is true in GET /v1/latency/regions, or try again later.',
  },
  upstream_timeout: {
    status: 504,
    title: 'Upstream timeout',
    when: 'The DNS resolver did not answer before the service\'s deadline, as when the servers of the name\'s zone do not answer it.',
    action: 'Try again later; a name whose zone does not answer keeps timing out, while other names are unaffected.',
  },
} as const satisfies Record<string, ProblemEntry>;

export type ProblemCode = keyof typeof PROBLEMS;

/** Whether a text is a code of the catalogue (own keys only: never `constructor` or `__proto__`). */
export function isProblemCode(text: string): text is ProblemCode {
  return Object.hasOwn(PROBLEMS, text);
}

/** A failure that maps to a problem document. Throw it from anywhere below the runtimes (core, engines, features, app). */
export class Problem extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ProblemCode, detail: string, headers: Record<string, string> = {}) {
    // A Problem is an answer, not a bug: capturing its stack would cost more than the rest of
    // the request (docs/benchmarks.md, "Per-operation costs"), and nothing reads it.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = limit;
    this.name = 'Problem';
    this.code = code;
    this.status = PROBLEMS[code].status;
    this.headers = headers;
  }
}

interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  request_id: string;
}

/** Spec §7: `detail` is at most 500 characters and `title` at most 100. */
const MAX_DETAIL = 500;

export function problemDocument(code: ProblemCode, detail: string, base: string, requestId: string): ProblemDocument {
  const entry = PROBLEMS[code];
  return {
    type: `${base}/problems/${code}`,
    title: entry.title,
    status: entry.status,
    detail: detail.length > MAX_DETAIL ? `${detail.slice(0, MAX_DETAIL - 1)}…` : detail,
    code,
    request_id: requestId,
  };
}
