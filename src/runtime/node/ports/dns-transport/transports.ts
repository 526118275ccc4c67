import { DnsCache } from '../../../../engines/dns/cache.js';
import { dohTransport } from '../../../../engines/dns/doh.js';
import { createResolver, type ResolverObserver, type ResolverRuntime } from '../../../../engines/dns/resolver.js';
import type { DnsTransport } from '../../../../core/ports/dns-transport.js';
import type { Clock } from '../../../../core/ports/clock.js';
import type { Config } from '../../adapter/config.js';
import { tcpTransport } from './tcp.js';
import { pipelinedTcpTransport } from './tcp-pipelined.js';
import { udpTransport } from './udp.js';
import { sharedUdpTransport } from './udp-shared.js';
import type { Logger } from '../../../../core/ports/logger.js';

/** The transport for `NETDIAG_DNS_UPSTREAM`: UDP falls back to TCP on the same resolver for a truncated reply. */
function upstreamTransport(upstream: Config['dnsUpstream'], timeoutMs: number): DnsTransport {
  switch (upstream.protocol) {
    case 'udp': {
      const tcp = tcpTransport(upstream.host, upstream.port);
      const perQuery = udpTransport(upstream.host, upstream.port, tcp);
      // The shared sockets hand a query to a socket of its own in the rare case that its ID is in use on all of them.
      return upstream.sockets === 'shared' ? sharedUdpTransport(upstream.host, upstream.port, perQuery, tcp) : perQuery;
    }
    case 'tcp':
      // Queries whose ID is in flight on the connection already get a connection of their own.
      return pipelinedTcpTransport(upstream.host, upstream.port, tcpTransport(upstream.host, upstream.port), timeoutMs);
    case 'https':
      return dohTransport(upstream.url);
  }
}

export function nodeResolver(config: Config, clock: Clock, logger?: Logger, observer?: ResolverObserver): ResolverRuntime {
  return createResolver({
    transport: upstreamTransport(config.dnsUpstream, config.dnsTimeoutMs),
    timeoutMs: config.dnsTimeoutMs,
    cache: new DnsCache({ maxEntries: config.dnsCacheSize, maxBytes: config.dnsCacheBytes, maxEntryBytes: config.dnsCacheMaxEntryBytes }, clock),
    clock,
    maxOutstanding: config.dnsMaxOutstanding,
    logger,
    observer,
  });
}
