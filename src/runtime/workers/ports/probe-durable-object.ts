import { DurableObject } from 'cloudflare:workers';

/**
 * A regional probe: an object placed in its region by a location hint at its first `get()`,
 * doing the least work there is, so the round trip the Worker times is the network's.
 */
export class RegionProbe extends DurableObject {
  ping(): number {
    return 1;
  }
}
