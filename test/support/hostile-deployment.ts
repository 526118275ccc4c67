// A FAKE netdiag deployment, standing in for a malicious one: every string it sends holds
// terminal controls (ESC sequences, OSC 52, CR, BEL, a C1 CSI, bidi overrides). The real server
// never sends such text, so only a fake can test that the CLI escapes what a deployment says
// (test/cli/hostile-text.test.ts). It answers the few routes the CLI's commands ask.
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Erases the line, returns to its start, paints green, writes the clipboard, retitles the window, reorders. */
export const HOSTILE_TEXT = '\u001b[2K\r\u001b[32mall good\u001b[0m\u001b]52;c;cHduZWQ=\u0007\u001b]0;title\u0007 \u009b2J \u202eevil\u2066 \u007f café back\\slash';

/** HOSTILE_TEXT as the CLI must print it: dig's \DDD for each UTF-8 byte of each control; letters and the backslash as they are. */
export const HOSTILE_SHOWN = '\\027[2K\\013\\027[32mall good\\027[0m\\027]52;c;cHduZWQ=\\007\\027]0;title\\007 \\194\\1552J \\226\\128\\174evil\\226\\129\\166 \\127 café back\\slash';

export interface HostileDeployment {
  url: string;
  close(): Promise<void>;
}

const meta = { request_id: '00000000-0000-4000-8000-000000000000', timestamp: '2025-01-01T00:00:00.000Z' };

function send(res: ServerResponse, status: number, body: unknown, type = 'application/json'): true {
  res.writeHead(status, { 'Content-Type': type });
  res.end(JSON.stringify(body));
  return true;
}

export async function startHostileDeployment(): Promise<HostileDeployment> {
  const server = createServer((req, res): true => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/v1/health') return send(res, 200, { data: { status: 'ok', api_version: 'v1', upstream_provider_health: 'not_checked' }, meta });
    if (path === '/v1/ip') {
      return send(res, 200, {
        data: {
          address: '127.0.0.1',
          ip_version: 'ipv4',
          reverse_hostname: HOSTILE_TEXT,
          network: { asn: 64500, organization: HOSTILE_TEXT },
          location: { country: null, region: null, city: HOSTILE_TEXT, postal_code: null, timezone: null, latitude: null, longitude: null },
          connection: { provider_colo: null, http_protocol: 'HTTP/1.1', tls_version: null },
        },
        meta,
      });
    }
    // weur answers (`netdiag latency weur` shows its name); eeur is listed as probed but its probe
    // fails with a hostile problem (`netdiag watch eeur`).
    if (path === '/v1/latency/regions') return send(res, 200, { data: { regions: [{ id: 'weur', name: HOSTILE_TEXT, available: true }, { id: 'eeur', name: HOSTILE_TEXT, available: true }] }, meta });
    if (path === '/v1/latency/regions/weur/probe') {
      return send(res, 200, { data: { region: 'weur', edge_to_region_rtt_ms: 12.5, client_to_api_rtt_ms: null, client_observed_total_rtt_ms: null, measurement_scope: 'provider_edge_to_regional_probe' }, meta });
    }
    // Anything else (/v1/dns/resolve, eeur's probe) is a problem whose title and detail are hostile.
    return send(res, 503, { type: 'about:blank', title: HOSTILE_TEXT, status: 503, detail: HOSTILE_TEXT }, 'application/problem+json');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}`,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
