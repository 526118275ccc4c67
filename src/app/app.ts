import { DEFAULT_TRANSFER_LIMITS, TransferLedger } from '../core/http/transfers.js';
import { dnsRoute } from '../features/dns/route.js';
import { eventsRoute } from '../features/events/route.js';
import { healthRoute } from '../features/health.js';
import { Problem } from '../core/http/problems.js';
import { drainStreamBody, readStreamBody } from '../core/http/bounded-read.js';
import { headerPairs, problemReply } from '../core/http/respond.js';
import { rateLimited, type LimitPorts } from '../core/http/rate-limit.js';
import { Router, methodHandler, type RouteDefinition, type RouteMethod } from '../core/http/router.js';
import type { Handler, HttpReply, HttpRequest, RequestContext, StreamedBody } from '../core/http/types.js';
import { ipFacts } from '../features/ip/facts.js';
import { familiesRoute, ipRoute } from '../features/ip/route.js';
import { serversRoute } from '../features/servers.js';
import { rootRoute, textRoutes } from '../features/ip/text-routes.js';
import { portRoute } from '../features/ip/port-route.js';
import { latencyRoutes } from '../features/latency/routes.js';
import { openApiRoute } from '../features/openapi.js';
import type { ConnectionFacts } from '../core/http/connection.js';
import type { Services } from './services.js';
import { speedTestRoute } from '../features/speedtest/route.js';
import { speedTestTargets } from '../features/speedtest/targets.js';
import { responsivenessRoutes } from '../features/speedtest/responsiveness.js';
import { turnCredentialsRoute } from '../features/speedtest/turn.js';
import { pageAssetRoutes, pageHandler } from '../features/page.js';
import { CLIENT_PACKAGE_PATH, clientPackageRoute } from '../features/client-package.js';
import { problemDocsRoute } from '../features/problem-docs.js';
import { methodLabel } from '../core/ports/metrics.js';
import { PORT_CHECK_OFF } from '../core/ports/port-check.js';
import type { Operation } from '../core/ports/limiter-store.js';

export interface App {
  /** The core: one request in, one reply out; synchronous where no route needs to wait. */
  handle(req: HttpRequest): HttpReply | Promise<HttpReply>;
  /** The same over Web-standard `Request`/`Response`, for Workers and in-process tests. */
  fetch(request: Request, connection: ConnectionFacts): Promise<Response>;
}

/** A pull stream over the chunks: the next one is made only when the client has taken the last. */
function streamOf(body: StreamedBody): ReadableStream<Uint8Array> {
  const chunks = body.chunks();
  let over = false;
  /** The body's `done`, once: at its end or when the client cancels it. */
  const end = () => {
    if (over) return;
    over = true;
    body.done?.();
  };
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.next();
      if (next.done === true) {
        controller.close();
        end();
      } else controller.enqueue(next.value);
    },
    cancel: end,
  });
}

/** The handler, counted against a second operation when `which` names one for the request. */
function limitedAlso(which: NonNullable<RouteMethod['alsoLimit']>, limiting: LimitPorts, handle: Handler): Handler {
  const byOperation = new Map<Operation, Handler>();
  return (ctx) => {
    const operation = which(ctx);
    if (operation === undefined) return handle(ctx);
    let counted = byOperation.get(operation);
    if (counted === undefined) byOperation.set(operation, (counted = rateLimited(operation, limiting, handle)));
    return counted(ctx);
  };
}

/**
 * One method's pipeline, the same for every route: the route's own checks that cost no quota
 * (`accept`), the caller's limit for its declared operation, then its handler. A method that
 * declares no operation, not even null, is refused here, at start-up.
 */
function pipeline(path: string, method: string, declared: RouteMethod, limiting: LimitPorts): Handler {
  const limit = declared.limit as RouteMethod['limit'] | undefined;
  if (limit === undefined) throw new Error(`route ${method} ${path} declares no rate-limit operation (limit: an operation, or null)`);
  if (limit !== null && !Object.hasOwn(limiting.limits, limit)) throw new Error(`route ${method} ${path} names an unknown rate-limit operation "${limit}"`);
  const handle = declared.alsoLimit === undefined ? declared.handle : limitedAlso(declared.alsoLimit, limiting, declared.handle);
  const limited = limit === null ? handle : rateLimited(limit, limiting, handle);
  const { accept, plainProblems } = declared;
  const checked: Handler =
    accept === undefined
      ? limited
      : (ctx) => {
          accept(ctx);
          return limited(ctx);
        };
  if (plainProblems === undefined) return checked;
  return (ctx) => {
    ctx.plainProblems = plainProblems;
    return checked(ctx);
  };
}

/** Every route of the app, each method behind the pipeline (its checks and the caller's limit), and `extraRoutes` after them. */
function routeTable({ ports, options }: Services, extraRoutes: RouteDefinition[]): Router {
  const { clock, metrics } = ports;
  const callerRule = { trust: options.trust, trustHeader: options.trustHeader };
  const limiting: LimitPorts = { ...callerRule, limits: options.limits, limiter: ports.limiter, clock, metrics, keyedHash: ports.keyedHash };
  const router = new Router();
  const facts = ipFacts({ ...callerRule, geo: ports.geo, dns: ports.dns, colo: options.colo, specialUsePtr: options.specialUsePtr === true });
  // One ledger for the targets and the responsiveness endpoints: a source's transfers of both count together.
  const transfers = new TransferLedger(options.transfers ?? DEFAULT_TRANSFER_LIMITS, clock);
  for (const route of [
    healthRoute,
    speedTestRoute,
    turnCredentialsRoute(options.turn, clock, ports.keyedHash, callerRule),
    ...latencyRoutes(ports.probes),
    ipRoute(facts),
    familiesRoute(options.families),
    serversRoute(options.servers ?? []),
    ...textRoutes(facts),
    portRoute(ports.portCheck ?? PORT_CHECK_OFF, facts),
    rootRoute(facts, pageHandler({ turn: options.turn !== undefined, families: options.families, servers: options.servers ?? [], credits: ports.geo.credits ?? [], clientPackage: ports.clientPackage === undefined ? null : CLIENT_PACKAGE_PATH }, ports.compress)),
    clientPackageRoute(ports.clientPackage),
    dnsRoute(ports.dns, { specialUsePtr: options.specialUsePtr === true }),
    eventsRoute(ports.events),
    openApiRoute(ports.openapi),
    ...speedTestTargets(options.speedTestTargets, transfers),
    ...responsivenessRoutes(options.speedTestTargets, transfers),
    ...pageAssetRoutes(),
    problemDocsRoute(),
    ...extraRoutes,
  ]) {
    router.add({
      path: route.path,
      sameOrigin: route.sameOrigin,
      GET: route.GET === undefined ? undefined : pipeline(route.path, 'GET', route.GET, limiting),
      POST: route.POST === undefined ? undefined : pipeline(route.path, 'POST', route.POST, limiting),
    });
  }
  return router;
}

/**
 * A same-origin route's request (the TURN credentials): its answers carry no CORS header, but a
 * page on one of the operator's listed deployments (`listed`, NETDIAG_SERVERS) may read them.
 */
function answerOwnOrigins(ctx: RequestContext, listed: ReadonlySet<string>): void {
  ctx.sameOrigin = true;
  const origin = ctx.req.header('origin');
  if (origin !== undefined && listed.has(origin)) ctx.listedOrigin = origin;
}

/**
 * Builds the HTTP app from its capabilities. No I/O, no environment, no runtime imports: a
 * runtime passes its ports and its operator's options in and serves `handle` or `fetch` (one
 * core, thin runtimes); each route is given only the part it uses. Every
 * request takes one path: request id and clock → route and method gate → the route's checks →
 * the caller's limit for the route's declared operation → handler → reply or problem, with the
 * common headers (CORS, request id, RateLimit-*) set by the reply helpers, never by a handler.
 * `extraRoutes` lets a test add a route through the same pipeline.
 */
export function createApp(services: Services, extraRoutes: RouteDefinition[] = []): App {
  const { ports, options } = services;
  const { clock, logger, metrics } = ports;
  const router = routeTable(services, extraRoutes);
  const { accessLog, publicUrl } = options;
  const listedOrigins = new Set((options.servers ?? []).map((s) => s.url));

  const fail = (ctx: RequestContext, err: unknown): HttpReply => {
    if (err instanceof Problem) return problemReply(ctx, err.code, err.message, err.headers);
    // Anything else is a bug: log it here, answer with a 500 that reveals nothing (the API contract).
    logger.error({ request_id: ctx.requestId, err }, 'unhandled error');
    return problemReply(ctx, 'internal_error', 'The service failed to handle this request.');
  };

  // Access log, when enabled: route pattern and outcome only, never the caller's address,
  // User-Agent, query or body (docs/api.md, "Privacy").
  const log = (ctx: RequestContext, route: string | null, reply: HttpReply): HttpReply => {
    if (metrics.enabled) metrics.request(route ?? 'unmatched', methodLabel(ctx.req.method), reply.status, (performance.now() - ctx.startedAt) / 1000);
    if (accessLog) {
      logger.info({
        request_id: ctx.requestId,
        method: ctx.req.method,
        route,
        status: reply.status,
        duration_ms: clock.now() - ctx.receivedAt,
      });
    }
    return reply;
  };

  const handle = (req: HttpRequest): HttpReply | Promise<HttpReply> => {
    const ctx: RequestContext = {
      req,
      requestId: ports.newId(),
      receivedAt: clock.now(),
      // A monotonic start for the duration metric, read only when metrics record.
      startedAt: metrics.enabled ? performance.now() : 0,
      publicUrl,
      params: {},
      rate: undefined,
      caller: undefined,
    };
    if (req.framingFault !== undefined) {
      // Refused before routing, and the connection closed: its framing is not to be trusted.
      return log(ctx, null, { ...problemReply(ctx, 'malformed_request', req.framingFault), close: true });
    }
    const matched = router.match(req.path);
    if (matched === undefined) {
      return log(ctx, null, problemReply(ctx, 'not_found', 'No resource exists at this path.'));
    }
    ctx.params = matched.params;
    if (matched.route.sameOrigin) answerOwnOrigins(ctx, listedOrigins);
    const route = matched.route.path;
    try {
      const reply = methodHandler(matched.route, req.method)(ctx);
      if (reply instanceof Promise) {
        return reply.then(
          (r) => log(ctx, route, r),
          (err: unknown) => log(ctx, route, fail(ctx, err)),
        );
      }
      return log(ctx, route, reply);
    } catch (err) {
      return log(ctx, route, fail(ctx, err));
    }
  };

  const fetch = async (request: Request, connection: ConnectionFacts): Promise<Response> => {
    const url = new URL(request.url);
    const reply = await handle({
      method: request.method,
      path: url.pathname,
      query: url.search.slice(1),
      header: (name) => request.headers.get(name) ?? undefined,
      origin: () => url.origin,
      readBody: (limit) => readStreamBody(request.body, limit),
      drainBody: (limit, marks) => drainStreamBody(request.body, limit, marks),
      connection: () => connection,
    });
    const headers = headerPairs(reply.headers);
    if (request.method === 'HEAD') {
      reply.stream?.done?.();
      return new Response(null, { status: reply.status, headers });
    }
    // Workers code a body by its Content-Encoding unless told it already is (`encodeBody`); other
    // Response implementations ignore the option.
    if (reply.stream !== undefined) return new Response(streamOf(reply.stream), { status: reply.status, headers, ...(reply.encoded === true ? { encodeBody: 'manual' } : {}) });
    return new Response(reply.body, { status: reply.status, headers });
  };

  return { handle, fetch };
}
