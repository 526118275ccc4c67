// `netdiag ip`: the caller's address as the deployment sees it (/v1/ip), checked to be the API's answer before it is printed.
import type { Schemas } from '../../generated/openapi-types.js';
import { ApiFailure, type Client } from '../api/client.js';
import { pairs, print, printJson, type Output } from '../terminal/output.js';

// The response data as the contract (openapi/openapi.yaml) defines it: a field changed there fails here.
type IpData = Schemas['CallerIpData'];

const orNone = (value: string | number | null | undefined, none = '-'): string => (value === null || value === undefined || value === '' ? none : String(value));
const joined = (parts: (string | null)[]): string => parts.filter((p) => p !== null && p !== '').join(', ') || '-';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `data` of /v1/ip with the objects the table reads, or a failure that says it is not the API's answer (never a TypeError). */
function ipData(base: string, d: unknown): IpData {
  if (isObject(d) && typeof d.address === 'string' && isObject(d.network) && isObject(d.location) && isObject(d.connection)) return d as unknown as IpData;
  throw new ApiFailure(`${base}/v1/ip answered data without the API's address, network, location and connection; is this a netdiag server?`);
}

/** `netdiag ip`: the caller's address and what the deployment knows of it, as a table or the API's JSON. */
export async function ipCommand(client: Client, out: Output): Promise<void> {
  const d = ipData(client.base, await client.get<unknown>('/v1/ip'));
  if (out.json) {
    printJson(d);
    return;
  }
  print(
    pairs(out, [
      ['address', d.address],
      ['version', d.ip_version === 'ipv6' ? 'IPv6' : 'IPv4'],
      ['reverse name', orNone(d.reverse_hostname)],
      ['network', d.network.asn === null ? '-' : joined([`AS${String(d.network.asn)}`, d.network.organization])],
      ['location', joined([d.location.city, d.location.region, d.location.country])],
      ['timezone', orNone(d.location.timezone)],
      ['edge', orNone(d.connection.provider_colo)],
      ['protocol', joined([d.connection.http_protocol, d.connection.tls_version])],
    ]),
  );
}
