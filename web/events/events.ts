// The analytics events the page sends: only those the configuration names, to the endpoint it
// names, with the contract's properties and nothing of the person (docs/api.md, "Privacy").
import type { Schemas } from '../../src/generated/openapi-types.js';

declare const NETDIAG_VERSION: string;

type Configuration = Schemas['SpeedTestConfiguration'];

export function sendEvent(config: Configuration, event: Schemas['EventName'], eventId: string, properties: Record<string, unknown>): void {
  // Only the events the configuration names, to the endpoint it names.
  if (!config.analytics.events.includes(event)) return;
  void fetch(config.analytics.endpoint, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ event, event_id: eventId, properties: { source: 'web', tool_version: `netdiag-web/${NETDIAG_VERSION}`, ...properties } }),
    keepalive: true,
  }).catch(() => undefined);
}
