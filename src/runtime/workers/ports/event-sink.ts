import type { EventSink, ReceivedEvent } from '../../../core/ports/event-sink.js';
import { DECLARED_PROPERTIES, NUMBER_PROPERTIES as NUMBERS } from '../../../generated/event-validator.js';

/**
 * The declared `properties`, split by type into Analytics Engine's columns in the document's
 * order, so a query names them by position: blob1 is the event name, blob2 `received_at`, then
 * the string properties; double1… the number properties (typed in the document). Analytics Engine takes at most 20 of
 * each; the document declares far fewer (checked below, at load).
 */
const NUMBER_PROPERTIES = NUMBERS as readonly string[];
const STRING_PROPERTIES = (DECLARED_PROPERTIES as readonly string[]).filter((name) => !NUMBER_PROPERTIES.includes(name));
if (STRING_PROPERTIES.length + 2 > 20 || NUMBER_PROPERTIES.length > 20) throw new Error('more event properties than Analytics Engine columns');

/**
 * Events to Workers Analytics Engine: one data point per event, written without waiting (the
 * platform batches them), indexed by event name (the sampling key). Exactly the validated event
 * and the receive time, as every sink (docs/api.md); `event_id` is not written, since a data
 * point is already one event and the id serves only de-duplication at a collector.
 */
export function analyticsEngineSink(dataset: AnalyticsEngineDataset): EventSink {
  return {
    accept(event: ReceivedEvent) {
      const props = event.properties;
      dataset.writeDataPoint({
        indexes: [event.event],
        blobs: [event.event, event.received_at, ...STRING_PROPERTIES.map((name) => (typeof props[name] === 'string' ? props[name] : null))],
        // A double cannot be null: -1 marks a property not sent (every declared metric is >= 0).
        doubles: NUMBER_PROPERTIES.map((name) => (typeof props[name] === 'number' ? props[name] : -1)),
      });
    },
    close: () => Promise.resolve(),
  };
}
