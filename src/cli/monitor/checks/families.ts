// The families check: `netdiag ip --both --json`, read down to each family's state and, when it
// answered, its time.
import { finiteOrNull, numberFigure, objectOf, type CheckKind } from './check-kind.js';

/** `netdiag ip --both`'s states: ok, or why the family did not answer. */
const STATES = ['ok', 'failed', 'timeout', 'unchecked'];

export const familiesCheck: CheckKind<Record<string, never>> = {
  keys: [],
  settings: () => ({}),
  args: (_, server) => ['ip', '--both', '--json', '--url', server],
  figures: [{ name: 'ipv4', kind: 'text', values: STATES }, { name: 'ipv6', kind: 'text', values: STATES }, numberFigure('ipv4_ms', 'ms'), numberFigure('ipv6_ms', 'ms')],
  figuresOf: (json) => {
    const family = (name: string) => objectOf(json[name]);
    // A time only for a family that answered: a refusal's or a deadline's time is no round trip.
    const ms = (name: string) => (family(name).state === 'ok' ? finiteOrNull(family(name).ms) : null);
    return { ipv4: family('ipv4').state ?? null, ipv6: family('ipv6').state ?? null, ipv4_ms: ms('ipv4'), ipv6_ms: ms('ipv6') };
  },
};
