// The client commands: ip, dns, latency and config against any deployment's API.
import { answerText } from '../../common/answer-text.js';
import type { Schemas } from '../../generated/openapi-types.js';
import { ApiFailure, type Client } from '../api/client.js';
import { pairs, print, printJson, table, type Output } from '../terminal/output.js';
import { terminalText } from '../terminal/terminal-text.js';
import { MAX_API_BODY_BYTES, discardBounded } from '../api/bounded-body.js';

/** The engine name the API contract's configuration carries (its `engine` is a constant there). */
const CONTRACT_ENGINE = '@provider/speedtest';

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

/** `netdiag dns`'s exit status for an answer that says the name does not exist (NXDOMAIN, RFC 1035 §4.1.1 RCODE 3). */
const NXDOMAIN_EXIT = 3;

/** Why an answer has no records, in words, by its response code. */
function noRecords(d: Schemas['DnsData']): string {
  switch (d.response_code) {
    case 'no_error':
      return `no records: ${d.query.name} exists but has no ${d.query.type} records`;
    case 'name_error':
      return `no records: ${d.query.name} does not exist (NXDOMAIN)`;
    default:
      return `no records: the resolver answered ${d.response_code}`;
  }
}

/**
 * `netdiag dns`: the answer, and its exit status (docs/command-line.md): 0 an answer (with records
 * or none), NXDOMAIN_EXIT when the name does not exist, 1 when the resolver failed (refused,
 * server_failure, other), as when the API did.
 */
export async function dnsCommand(client: Client, out: Output, name: string, type: string): Promise<number> {
  const query = `name=${encodeURIComponent(name)}&type=${encodeURIComponent(type.toUpperCase())}`;
  const d = await client.get<Schemas['DnsData']>(`/v1/dns/resolve?${query}`);
  const exit = d.response_code === 'no_error' ? 0 : d.response_code === 'name_error' ? NXDOMAIN_EXIT : 1;
  if (out.json) {
    printJson(d);
    return exit;
  }
  print(terminalText(`${d.query.name} ${d.query.type}: ${d.response_code}`));
  if (d.answers.length > 0) print(table(out, [['NAME', 'TYPE', 'TTL', 'DATA'], ...d.answers.map((a) => [a.name, a.type, String(a.ttl_seconds), answerText(a)])]));
  else print(terminalText(noRecords(d)));
  return exit;
}

/** This client's own round trip to the API: median time to the response headers of a few health requests on a warm connection. */
async function clientRtt(client: Client): Promise<number> {
  await client.get('/v1/health');
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    // client.get above refused a redirect away; a timing request follows none at all.
    const res = await fetch(`${client.base}/v1/health`, { redirect: 'error', signal: AbortSignal.timeout(client.timeoutMs) });
    samples.push(performance.now() - started);
    await discardBounded(res, MAX_API_BODY_BYTES);
  }
  samples.sort((a, b) => a - b);
  return samples[2] ?? 0;
}

export async function latencyCommand(client: Client, out: Output, region: string | undefined): Promise<void> {
  const { regions } = await client.get<Schemas['RegionsResponse']['data']>('/v1/latency/regions');
  const chosen = region === undefined ? regions.filter((r) => r.available) : regions.filter((r) => r.id === region);
  if (region !== undefined && chosen.length === 0) {
    // The API says which ids exist: let it name them.
    await client.get(`/v1/latency/regions/${encodeURIComponent(region)}/probe`).catch((err: unknown) => {
      throw err instanceof ApiFailure ? new ApiFailure(`region "${region}": ${err.message}`) : err;
    });
  }
  const client_rtt = await clientRtt(client);
  const rows = [];
  for (const r of chosen) {
    const probe = await client.get<Schemas['LatencyProbeData']>(`/v1/latency/regions/${r.id}/probe`);
    rows.push({ region: r.id, name: r.name, edge_to_region_rtt_ms: probe.edge_to_region_rtt_ms, client_to_api_rtt_ms: Math.round(client_rtt * 1000) / 1000 });
  }
  if (out.json) {
    // The client's own round trip at the top too: it is measured when no region is available.
    printJson({ client_to_api_rtt_ms: Math.round(client_rtt * 1000) / 1000, regions: rows });
    return;
  }
  if (rows.length === 0) {
    print('This deployment has no regional probes configured.');
    return;
  }
  print(
    table(out, [
      ['REGION', 'NAME', 'YOU → API', 'API → REGION', 'TOTAL'],
      ...rows.map((r) => [r.region, r.name, `${r.client_to_api_rtt_ms.toFixed(1)} ms`, `${r.edge_to_region_rtt_ms.toFixed(1)} ms`, `${(r.client_to_api_rtt_ms + r.edge_to_region_rtt_ms).toFixed(1)} ms`]),
    ]),
  );
}

export async function configCommand(client: Client, out: Output): Promise<void> {
  const d = await client.get<Schemas['SpeedTestConfiguration']>('/v1/speed-test/configuration');
  if (out.json) {
    printJson(d);
    return;
  }
  // The contract's engine name is a constant that names no program: a reader is told
  // what measures instead. A server that is not netdiag may send any name, shown as it is.
  const named: string = d.engine;
  print(named === CONTRACT_ENGINE ? "The speed test's plans: netdiag's page runs them with Cloudflare's speed-test engine, `netdiag speedtest` with its own client." : terminalText(`engine ${named}`));
  for (const mode of d.modes) {
    print(`\n${terminalText(`${mode.id}: ${mode.description}`)}`);
    print(
      table(out, [
        ['STEP', 'TYPE', 'COUNT', 'BYTES'],
        ...mode.measurements.map((m, i) => [String(i + 1), m.type, String(m.packet_count ?? m.request_count ?? ''), m.bytes_per_request === undefined ? '' : String(m.bytes_per_request)]),
      ]),
    );
  }
}
