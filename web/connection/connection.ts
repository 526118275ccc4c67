// "Your connection": the caller as this page's own origin sees it (/v1/ip), as a view (what each
// field shows, in the page's language, pure and unit-tested) and one render of it.
import type { Schemas } from '../../src/generated/openapi-types.js';
import { $, api, problemText, text } from '../ui/dom.js';
import { t } from '../i18n/locale.js';

// The response data as the contract (openapi/openapi.yaml) defines it: a field changed there fails here.
export type IpData = Schemas['CallerIpData'];

type Field = 'ip_version' | 'reverse_hostname' | 'network' | 'location' | 'edge' | 'protocol';

/** The parts that are known, listed; `none` when there is none. */
const joined = (parts: (string | null)[], none: string): string => parts.filter((p) => p !== null && p !== '').join(t('list.separator')) || none;

/** What the section shows of the caller: the address, and each field's words. */
export function connectionView(d: IpData): { address: string; fields: Record<Field, string> } {
  return {
    address: d.address,
    fields: {
      ip_version: d.ip_version === 'ipv6' ? 'IPv6' : 'IPv4',
      reverse_hostname: d.reverse_hostname ?? t('common.none'),
      network: d.network.asn === null ? t('common.unknown') : joined([`AS${String(d.network.asn)}`, d.network.organization], t('common.unknown')),
      location: joined([d.location.city, d.location.region, d.location.country], t('common.unknown')),
      edge: d.connection.provider_colo ?? t('conn.not-reported'),
      protocol: joined([d.connection.http_protocol, d.connection.tls_version], t('conn.not-observed')),
    },
  };
}

/** Asks /v1/ip and shows the answer, or why there is none; the data, for the dual-stack check. */
export async function showConnection(): Promise<IpData | undefined> {
  const res = await api<IpData>('/v1/ip');
  if (!res.ok) {
    const error = $('#connection-error');
    error.textContent = t('conn.unavailable', { reason: problemText(res.problem) });
    error.hidden = false;
    return undefined;
  }
  const view = connectionView(res.data);
  text('#address', view.address);
  for (const [name, value] of Object.entries(view.fields)) text(`#connection [data-field="${name}"]`, value);
  return res.data;
}
