// The one start-up line that states what this process will do: listeners, DNS
// upstream, events sink, limiter store, probes, geo data. URLs are reduced to what names the
// peer (scheme, host, port, path): user information and query strings, where credentials and
// tokens live, never reach the log.
import type { Config } from './config.js';

/** A URL without its user information, query or fragment. */
function redacted(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname === '/' ? '' : u.pathname}`;
}

export function configurationSummary(config: Config, workers: number): Record<string, unknown> {
  const sink = config.eventsSink;
  return {
    listeners: {
      api: `${config.tls === undefined ? 'http' : 'https'}://${config.host ?? '0.0.0.0'}:${String(config.port)}`,
      tls: config.tls !== undefined,
      proxy_protocol: config.proxyProtocol,
      metrics: config.metrics === undefined ? null : `http://${config.metrics.host}:${String(config.metrics.port)}/metrics`,
    },
    public_url: config.publicUrl ?? null,
    trust_proxy: config.trustText,
    trust_proxy_header: config.trustHeader,
    dns_upstream: config.dnsUpstream.protocol === 'https' ? redacted(config.dnsUpstream.url) : `${config.dnsUpstream.protocol}://${config.dnsUpstream.host}:${String(config.dnsUpstream.port)}`,
    ...(config.dnsUpstream.protocol === 'udp' ? { dns_udp_sockets: config.dnsUpstream.sockets } : {}),
    events_sink: sink.kind === 'http' ? redacted(sink.url) : sink.kind,
    limiter: config.redisUrl !== undefined ? `redis ${redacted(config.redisUrl)}` : workers > 1 ? 'in-process, one table shared by the worker threads' : 'in-process',
    workers,
    probes: Object.fromEntries([...config.probes].map(([region, url]) => [region, redacted(url)])),
    geo: {
      city: config.geoipCity ?? 'embedded DB-IP Lite city',
      asn: config.geoipAsn ?? 'embedded ASN table',
    },
    speedtest_targets: config.speedTestTargets,
    // The URL only: the secret mints credentials and is never written anywhere.
    turn: config.turn?.url ?? null,
    family_origins: config.families,
    access_log: config.accessLog,
  };
}
