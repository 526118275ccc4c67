import { ALLOWED_REQUEST_HEADERS, PREFLIGHT_MAX_AGE } from './headers.js';
import { Problem } from './problems.js';
import { baseHeaders } from './respond.js';
import type { Handler, HttpReply, RequestContext } from './types.js';
import type { Operation } from '../ports/limiter-store.js';

/**
 * What a route declares about one method; the app (src/app/app.ts) runs it through the one pipeline:
 * `accept`, then the caller's limit for `limit`, then `handle`, then the envelope or problem and
 * the common headers. A handler never applies a limit itself.
 */
export interface RouteMethod {
  /**
   * The operation whose per-source limit this method counts against (the API contract), or null where no
   * limit applies (static documents, health). Required, so a new route cannot leave it out by
   * forgetting: the type-check refuses it, and `createApp` refuses one that says neither.
   */
  limit: Operation | null;
  /**
   * A second operation the request counts against as well, when the route's checks say so
   * (`?ip=` asking for another address's PTR counts against `dns` too): after the first limit,
   * before the handler.
   */
  alsoLimit?: (ctx: RequestContext) => Operation | undefined;
  /** Checks made before the limit: a request they refuse (a thrown Problem) costs no quota. */
  accept?: (ctx: RequestContext) => void;
  /** The route answers curl in text: its problems, the limit's 429 included, are text too (`problemReply`). */
  plainProblems?: true;
  handle: Handler;
}

export interface RouteDefinition {
  /** A literal path, or segments where `:name` captures one path segment. */
  path: string;
  /**
   * Answered to this origin only: none of its responses, preflight and problems included, carries
   * `Access-Control-Allow-Origin`, so a script on another site cannot read them (docs/api.md, "CORS").
   */
  sameOrigin?: true;
  GET?: RouteMethod;
  POST?: RouteMethod;
}

/** A route with each method's pipeline built (`createApp`): what the router serves. */
interface CompiledDefinition {
  path: string;
  sameOrigin?: true;
  GET?: Handler;
  POST?: Handler;
}

interface CompiledRoute {
  segments: string[] | undefined;
  path: string;
  GET: Handler | undefined;
  POST: Handler | undefined;
  allow: string;
  sameOrigin: boolean;
}

/**
 * A fixed route table: literal paths by map lookup, parameterised ones by segment match. The
 * service has about a dozen paths, so this stays simpler and faster than a general router.
 */
export class Router {
  readonly #literal = new Map<string, CompiledRoute>();
  readonly #patterned: CompiledRoute[] = [];

  add(definition: CompiledDefinition): void {
    const allowed: string[] = [];
    if (definition.GET) allowed.push('GET', 'HEAD');
    if (definition.POST) allowed.push('POST');
    allowed.push('OPTIONS');
    const route: CompiledRoute = {
      path: definition.path,
      segments: definition.path.includes('/:') ? definition.path.split('/') : undefined,
      GET: definition.GET,
      POST: definition.POST,
      allow: allowed.join(', '),
      sameOrigin: definition.sameOrigin === true,
    };
    if (route.segments === undefined) this.#literal.set(route.path, route);
    else this.#patterned.push(route);
  }

  /** The route for a path, or undefined for an unknown path (404). */
  match(path: string): { route: CompiledRoute; params: Record<string, string> } | undefined {
    const literal = this.#literal.get(path);
    if (literal !== undefined) return { route: literal, params: {} };
    const parts = path.split('/');
    for (const route of this.#patterned) {
      const segments = route.segments ?? [];
      if (segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < segments.length && ok; i++) {
        const segment = segments[i] ?? '';
        const part = parts[i] ?? '';
        if (segment.startsWith(':')) {
          if (part === '') ok = false;
          else params[segment.slice(1)] = part;
        } else if (segment !== part) ok = false;
      }
      if (ok) return { route, params };
    }
    return undefined;
  }
}

/**
 * Method gate for a matched path (the API contract): HEAD runs the GET (the runtime drops the
 * body, RFC 9110 §9.3.2), OPTIONS answers the preflight with 204, anything else 405 + `Allow`.
 */
export function methodHandler(route: CompiledRoute, method: string): Handler {
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (route.GET) return route.GET;
      break;
    case 'POST':
      if (route.POST) return route.POST;
      break;
    case 'OPTIONS':
      return (ctx) => preflight(ctx, route.allow);
  }
  return () => {
    throw new Problem('method_not_allowed', `Method ${method} is not supported here; allowed: ${route.allow}.`, {
      Allow: route.allow,
    });
  };
}

function preflight(ctx: RequestContext, allow: string): HttpReply {
  const headers = baseHeaders(ctx, 'no-store');
  headers.push(
    'Allow', allow,
    'Access-Control-Allow-Methods', allow,
    'Access-Control-Allow-Headers', ALLOWED_REQUEST_HEADERS,
    'Access-Control-Max-Age', PREFLIGHT_MAX_AGE,
  );
  return { status: 204, headers, body: null };
}
