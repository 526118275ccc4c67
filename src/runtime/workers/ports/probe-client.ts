import { PROBE_PATH, ProbeUnavailable, type LatencyProbes } from '../../../core/ports/probe-client.js';
import type { RegionId } from '../../../common/regions.js';
import { failureReason } from '../../../core/failure-reason.js';
import type { WorkersProbe } from '../adapter/config.js';
import type { RegionProbe } from './probe-durable-object.js';
import type { Logger } from '../../../core/ports/logger.js';

/** Durable Object location hints (the platform's nine); both Asia-Pacific regions share one. */
const LOCATION_HINT: Readonly<Record<RegionId, DurableObjectLocationHint>> = {
  wnam: 'wnam',
  enam: 'enam',
  weur: 'weur',
  eeur: 'eeur',
  'apac-ne': 'apac',
  'apac-se': 'apac',
  oc: 'oc',
};

/** A probe that has not answered within this is unavailable (as on Node). */
const DEADLINE_MS = 2_000;

function within<T>(work: Promise<T>, region: RegionId): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new ProbeUnavailable(`the probe for ${region} did not answer within ${String(DEADLINE_MS)} ms`));
    }, DEADLINE_MS);
  });
  return Promise.race([work, late]).finally(() => {
    clearTimeout(timer);
  });
}

/**
 * The edge's probes on Workers. A call is timed with `performance.now()`, which in production
 * advances only across I/O: an awaited call to another object is exactly that, so the figure is
 * the round trip. Each probe is warmed once per isolate (an untimed call first): the first call
 * to a Durable Object includes creating it, and the first fetch to a URL its connection, which
 * the spec keeps out of the figure (docs/api.md, "Latency probes").
 */
export function workersProbes(config: ReadonlyMap<RegionId, WorkersProbe>, namespace: DurableObjectNamespace<RegionProbe> | undefined, logger: Logger): LatencyProbes {
  const calls = new Map<RegionId, () => Promise<unknown>>();
  for (const [region, probe] of config) {
    if (probe.kind === 'durable-object' && namespace !== undefined) {
      // One object per region, by name; the hint counts only when the object is first made. A
      // stub is an I/O object of the request that made it, so each measurement gets its own.
      const id = namespace.idFromName(region);
      calls.set(region, () => namespace.get(id, { locationHint: LOCATION_HINT[region] }).ping());
    } else if (probe.kind === 'url') {
      const url = `${probe.url.replace(/\/+$/, '')}${PROBE_PATH}`;
      calls.set(region, async () => {
        const res = await fetch(url, { method: 'GET' });
        await res.body?.cancel();
        if (res.status !== 204) throw new Error(`the probe answered ${String(res.status)}`);
      });
    }
  }
  const warmed = new Set<RegionId>();

  return {
    regions: new Set(calls.keys()),
    async measure(region) {
      const call = calls.get(region);
      if (call === undefined) throw new ProbeUnavailable(`No probe is configured for region ${region}.`);
      try {
        if (!warmed.has(region)) {
          await within(call(), region);
          warmed.add(region);
        }
        const started = performance.now();
        await within(call(), region);
        return performance.now() - started;
      } catch (err) {
        warmed.delete(region);
        logger.warn({ region, reason: err instanceof ProbeUnavailable ? 'deadline' : failureReason(err) }, 'latency probe unavailable');
        throw err instanceof ProbeUnavailable ? err : new ProbeUnavailable(`the probe for ${region} failed`);
      }
    },
  };
}
