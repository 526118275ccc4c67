// The page's script: the caller's connection, a DNS lookup, regional latency and the speed test,
// all through this server's own API (same origin; nothing is fetched from anywhere else).
import { answerText } from '../src/dns/answer-text.js';
import type { Schemas } from '../src/generated/openapi-types.js';
import { showFamilies } from './dual-stack.js';
import { keepResult, keepWatch, setUpHistory } from './history-view.js';
import { setUpShare } from './share.js';
import { runSpeedTest } from './speedtest.js';
import { showShared } from './shared-view.js';
import { setUpWatch } from './watch.js';
import { $, api, problemText, text, type ApiResult } from './dom.js';
import { formatMs } from './report.js';
import { num, t } from './i18n/locale.js';
import { setUpLanguage } from './i18n/page-text.js';

// The response data as the contract (openapi/openapi.yaml) defines it: a field changed there fails here.
type IpData = Schemas['CallerIpData'];

const joined = (parts: (string | null)[], none = t('common.unknown')): string => parts.filter((p) => p !== null && p !== '').join(t('list.separator')) || none;

/** The connection as this page's own origin sees it; its data, for the dual-stack check. */
async function showConnection(): Promise<IpData | undefined> {
  const res = await api<IpData>('/v1/ip');
  if (!res.ok) {
    const error = $('#connection-error');
    error.textContent = t('conn.unavailable', { reason: problemText(res.problem) });
    error.hidden = false;
    return undefined;
  }
  const d = res.data;
  text('#address', d.address);
  const field = (name: string, value: string): void => {
    text(`#connection [data-field="${name}"]`, value);
  };
  field('ip_version', d.ip_version === 'ipv6' ? 'IPv6' : 'IPv4');
  field('reverse_hostname', d.reverse_hostname ?? t('common.none'));
  field('network', d.network.asn === null ? t('common.unknown') : joined([`AS${String(d.network.asn)}`, d.network.organization]));
  field('location', joined([d.location.city, d.location.region, d.location.country]));
  field('edge', d.connection.provider_colo ?? t('conn.not-reported'));
  field('protocol', joined([d.connection.http_protocol, d.connection.tls_version], t('conn.not-observed')));
  return d;
}

function setUpDns(): void {
  const form = $<HTMLFormElement>('#dns-form');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const name = $<HTMLInputElement>('#dns-name').value.trim();
    const type = $<HTMLSelectElement>('#dns-type').value;
    const table = $<HTMLTableElement>('#dns-answers');
    const error = $('#dns-error');
    error.hidden = true;
    table.hidden = true;
    text('#dns-status', t('dns.looking-up', { name, type }));
    void api<Schemas['DnsData']>(`/v1/dns/resolve?name=${encodeURIComponent(name)}&type=${encodeURIComponent(type)}`).then((res) => {
      if (!res.ok) {
        text('#dns-status', '');
        error.textContent = problemText(res.problem);
        error.hidden = false;
        return;
      }
      const { answers, response_code } = res.data;
      const code = response_code.replace('_', ' ');
      text('#dns-status', answers.length === 1 ? t('dns.answers-one', { code }) : t('dns.answers-many', { count: num(answers.length), code }));
      const body = table.tBodies[0];
      if (body === undefined) return;
      body.replaceChildren(
        ...answers.map((a) => {
          const row = document.createElement('tr');
          for (const cell of [a.name, a.type, answerText(a), String(a.ttl_seconds)]) {
            const td = document.createElement('td');
            td.textContent = cell;
            row.append(td);
          }
          return row;
        }),
      );
      table.hidden = answers.length === 0;
    });
  });
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

async function showRegions(res: ApiResult<Schemas['RegionsResponse']['data']>, noteProbeLimit: (limit: number) => void): Promise<void> {
  const list = $('#regions');
  const note = $('#regions-note');
  if (!res.ok) {
    note.textContent = problemText(res.problem);
    note.hidden = false;
    return;
  }
  const available = res.data.regions.filter((r) => r.available);
  if (available.length === 0) {
    list.hidden = true;
    note.textContent = t('regions.none');
    note.hidden = false;
    return;
  }
  const client = await clientRtt();
  const rows = await Promise.all(
    available.map(async (region) => {
      const probe = await api<Schemas['LatencyProbeData']>(`/v1/latency/regions/${region.id}/probe`);
      if (probe.limit !== undefined) noteProbeLimit(probe.limit);
      return { region, edge: probe.ok ? probe.data.edge_to_region_rtt_ms : undefined, problem: probe.ok ? undefined : problemText(probe.problem) };
    }),
  );
  const longest = Math.max(1, ...rows.map((r) => (r.edge ?? 0) + (client ?? 0)));
  list.replaceChildren(
    ...rows.map(({ region, edge, problem }) => {
      const item = document.createElement('li');
      item.dataset.region = region.id;
      const label = document.createElement('span');
      label.textContent = region.name;
      const bar = document.createElement('span');
      bar.className = 'bar';
      bar.setAttribute('aria-hidden', 'true');
      for (const [cls, ms] of [['client', client], ['edge', edge]] as const) {
        const part = document.createElement('span');
        part.className = cls;
        part.style.width = `${String(((ms ?? 0) / longest) * 100)}%`;
        bar.append(part);
      }
      const detail = document.createElement('small');
      detail.className = 'detail';
      detail.textContent =
        edge === undefined
          ? t('regions.unavailable', { reason: problem ?? '' })
          : t('regions.detail', { client: client === undefined ? t('common.not-measured') : formatMs(client), edge: formatMs(edge) });
      item.append(label, bar, detail);
      return item;
    }),
  );
}

/** The credits the server's geo data asks for (its licence), as the server gives them. */
function showCredits(): void {
  const credits = document.documentElement.dataset.credits;
  if (credits === undefined || credits === '') return;
  const element = $('#credits');
  element.textContent = t('page.credits', { credits: credits.split('\n').join(t('page.credits-separator')) });
  element.hidden = false;
}

document.addEventListener('DOMContentLoaded', () => {
  // The reader's language first: every section writes its words in it (web/i18n/).
  setUpLanguage();
  showCredits();
  showShared();
  setUpHistory();
  setUpDns();
  void showConnection().then(showFamilies);
  void runSpeedTest({ share: setUpShare(), keep: keepResult });
  // One request for the regions, for the regional section and the watch alike; the regional
  // section's probe answers tell the watch this server's probe limit.
  void api<Schemas['RegionsResponse']['data']>('/v1/latency/regions').then((res) => {
    const watch = setUpWatch(res.ok ? res.data.regions.filter((r) => r.available) : [], keepWatch);
    return showRegions(res, (limit) => {
      watch.noteProbeLimit(limit);
    });
  });
});
