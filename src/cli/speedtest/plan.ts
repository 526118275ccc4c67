// What `netdiag speedtest` takes from a deployment's configuration, checked before anything is
// sent: a server's plan is followed only within bounds, since a hostile or broken one could make
// the client allocate 2 GB for one upload (`bytes_per_request: 2000000000`).
import type { Schemas } from '../../generated/openapi-types.js';
import { ApiFailure } from '../api/client.js';

/**
 * The most this client sends or reads in one transfer: netdiag's own largest (the full plan's
 * 250 MB download, MAX_BYTES_PER_REQUEST of src/features/speedtest/configuration.ts; a test holds
 * the two equal). The upload body is allocated at the size it may grow to, so this bounds memory.
 */
export const MAX_TRANSFER_BYTES = 250_000_000;
/** Idle pings, and transfers of one step: netdiag's plans ask for 20 and 4 at most. */
const MAX_COUNT = 1000;
/** Steps of one mode: netdiag's full plan has 23. */
const MAX_STEPS = 100;

type Configuration = Schemas['SpeedTestConfiguration'];
type Mode = Configuration['modes'][number];

function refuse(field: string, value: number, bound: number, why: string): never {
  throw new ApiFailure(`the deployment's speed-test configuration asks for ${field} ${String(value)}, more than ${String(bound)} (${why}); this client does not follow it`);
}

/** Throws ApiFailure naming the first field past this client's bounds; the plan is otherwise used as it is. */
export function checkPlan(config: Configuration, mode: Mode): void {
  const max = config.limits.max_bytes_per_request;
  if (max !== undefined && max > MAX_TRANSFER_BYTES) refuse('limits.max_bytes_per_request', max, MAX_TRANSFER_BYTES, 'the most this client moves in one request');
  if (mode.measurements.length > MAX_STEPS) refuse(`${mode.id} mode's steps`, mode.measurements.length, MAX_STEPS, 'the most steps this client runs');
  mode.measurements.forEach((m, i) => {
    const at = `modes[${mode.id}].measurements[${String(i)}]`;
    if ((m.bytes_per_request ?? 0) > MAX_TRANSFER_BYTES) refuse(`${at}.bytes_per_request`, m.bytes_per_request ?? 0, MAX_TRANSFER_BYTES, 'the most this client moves in one request');
    if ((m.packet_count ?? 0) > MAX_COUNT) refuse(`${at}.packet_count`, m.packet_count ?? 0, MAX_COUNT, 'the most pings this client sends for one step');
    if ((m.request_count ?? 0) > MAX_COUNT) refuse(`${at}.request_count`, m.request_count ?? 0, MAX_COUNT, 'the most requests this client makes for one step');
  });
}
