import { CACHE } from '../../core/http/headers.js';
import { bodyCutOffReply, envelopeSerialized, problemReply, serialize } from '../../core/http/respond.js';
import type { RouteDefinition } from '../../core/http/router.js';
import { isoTimestamp } from '../../core/http/timestamp.js';
import type { Handler, HttpReply, RequestContext } from '../../core/http/types.js';
import type { EventSink } from '../../core/ports/event-sink.js';
import { MAX_EVENT_BYTES, isJsonMediaType, readBoundedBody } from './body.js';
import { validateAnalyticsEvent as validate } from './validate.js';

const ACCEPTED = serialize({ accepted: true });

/** A refusal sent before the body was read to its end: the connection is not reused for it. */
function refuse(ctx: RequestContext, code: 'unsupported_media_type' | 'payload_too_large', detail: string): HttpReply {
  return { ...problemReply(ctx, code, detail), close: true };
}

/**
 * POST /v1/events (the API contract; docs/api.md, "Analytics intake"). Checks run in order of
 * cost: media type (415), size while reading (413), JSON (400 invalid_json), schema (400
 * invalid_event). The 202 is answered as soon as the event is handed to the sink, which queues
 * and never waits on delivery.
 */
export function eventsRoute(events: EventSink): RouteDefinition {

  const intake: Handler = async (ctx) => {
    if (!isJsonMediaType(ctx.req.header('content-type'))) {
      return refuse(ctx, 'unsupported_media_type', 'The body must be application/json (UTF-8).');
    }
    const body = await readBoundedBody(ctx.req);
    if (!body.ok) {
      if (body.reason === 'too_large') return refuse(ctx, 'payload_too_large', `The body must be at most ${String(MAX_EVENT_BYTES)} bytes.`);
      if (body.reason === 'cut_off') return bodyCutOffReply(ctx);
      return problemReply(ctx, 'invalid_json', 'The body is not valid UTF-8.');
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.text);
    } catch {
      return problemReply(ctx, 'invalid_json', 'The body is not valid JSON.');
    }
    const result = validate(parsed);
    if (!result.ok) return problemReply(ctx, 'invalid_event', `Invalid event: ${result.reason}.`);
    // Exactly the validated event and a receive time: no address, header or request id.
    events.accept({ ...result.event, received_at: isoTimestamp(ctx.receivedAt) });
    return envelopeSerialized(ctx, ACCEPTED, CACHE.noStore, 202);
  };

  return { path: '/v1/events', POST: { limit: 'events', handle: intake } };
}
