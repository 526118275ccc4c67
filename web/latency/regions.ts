// "Regional latency": the browser's own round trip to this server beside this server's to each
// region with a probe, as a view (each region's bar parts and line, pure and unit-tested) and one
// render of it.
import type { Schemas } from '../../src/generated/openapi-types.js';
import { $, api, problemText, type ApiResult } from '../ui/dom.js';
import { t } from '../i18n/locale.js';
import { formatMs } from '../speedtest/result-text.js';

type Region = Schemas['RegionsResponse']['data']['regions'][number];

/** One region's probe: its round trip from this server, or the problem that came instead. */
interface Probed {
  region: Region;
  edgeMs: number | undefined;
  problem: string | undefined;
}

interface RegionView {
  id: string;
  name: string;
  /** Each part of the bar as a share of the longest bar's, in percent. */
  clientPercent: number;
  edgePercent: number;
  detail: string;
}

/** Each region as the section shows it; `clientMs` is the browser's round trip to this server. */
export function regionsView(probed: readonly Probed[], clientMs: number | undefined): RegionView[] {
  const longest = Math.max(1, ...probed.map((r) => (r.edgeMs ?? 0) + (clientMs ?? 0)));
  return probed.map(({ region, edgeMs, problem }) => ({
    id: region.id,
    name: region.name,
    clientPercent: ((clientMs ?? 0) / longest) * 100,
    edgePercent: ((edgeMs ?? 0) / longest) * 100,
    detail:
      edgeMs === undefined
        ? t('regions.unavailable', { reason: problem ?? '' })
        : t('regions.detail', { client: clientMs === undefined ? t('common.not-measured') : formatMs(clientMs), edge: formatMs(edgeMs) }),
  }));
}

function render(view: RegionView[] | { note: string }): void {
  const list = $('#regions');
  const note = $('#regions-note');
  if ('note' in view) {
    list.hidden = true;
    note.textContent = view.note;
    note.hidden = false;
    return;
  }
  list.replaceChildren(
    ...view.map((region) => {
      const item = document.createElement('li');
      item.dataset.region = region.id;
      const label = document.createElement('span');
      label.textContent = region.name;
      const bar = document.createElement('span');
      bar.className = 'bar';
      bar.setAttribute('aria-hidden', 'true');
      for (const [cls, percent] of [['client', region.clientPercent], ['edge', region.edgePercent]] as const) {
        const part = document.createElement('span');
        part.className = cls;
        part.style.width = `${String(percent)}%`;
        bar.append(part);
      }
      const detail = document.createElement('small');
      detail.className = 'detail';
      detail.textContent = region.detail;
      item.append(label, bar, detail);
      return item;
    }),
  );
}

/** The browser's own round trip to this server: median request-to-first-byte of a few requests. */
async function clientRtt(): Promise<number | undefined> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    const url = `/v1/health?rtt=${String(i)}-${String(Date.now())}`;
    try {
      await (await fetch(url, { cache: 'no-store' })).arrayBuffer();
    } catch {
      continue;
    }
    const entry = performance.getEntriesByName(new URL(url, location.href).href).at(-1) as PerformanceResourceTiming | undefined;
    if (entry !== undefined && entry.responseStart > 0) samples.push(entry.responseStart - entry.requestStart);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

/** Probes each available region once and shows the section; each probe's limit goes to `noteProbeLimit` (the watch's budget). */
export async function showRegions(res: ApiResult<Schemas['RegionsResponse']['data']>, noteProbeLimit: (limit: number) => void): Promise<void> {
  if (!res.ok) {
    render({ note: problemText(res.problem) });
    return;
  }
  const available = res.data.regions.filter((r) => r.available);
  if (available.length === 0) {
    render({ note: t('regions.none') });
    return;
  }
  const client = await clientRtt();
  const probed = await Promise.all(
    available.map(async (region): Promise<Probed> => {
      const probe = await api<Schemas['LatencyProbeData']>(`/v1/latency/regions/${region.id}/probe`);
      if (probe.limit !== undefined) noteProbeLimit(probe.limit);
      return { region, edgeMs: probe.ok ? probe.data.edge_to_region_rtt_ms : undefined, problem: probe.ok ? undefined : problemText(probe.problem) };
    }),
  );
  render(regionsView(probed, client));
}
