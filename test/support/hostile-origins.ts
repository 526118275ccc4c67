// Values of NETDIAG_IPV4_URL / NETDIAG_IPV6_URL that would reach the page's
// Content-Security-Policy as more than an origin, each with the refusal it must get, for the
// Node tables (src/runtime/node/adapter/config.test.ts, test/operators/start-up-refusals.test.ts) and the Worker's
// (test/workers/config.test.ts) alike; and origins that must still be accepted.

const hostRule = (text: string, host: string) =>
  `"${text}" must name its host with letters, digits and hyphens in dot-separated labels (no empty label or trailing dot), or an IP address; got the host "${host}"`;

/** [value, the refusal's message], for NETDIAG_IPV4_URL. */
export const HOSTILE_ORIGINS: [string, string][] = [
  // A wildcard source: the policy would let the page connect anywhere.
  ['http://*', hostRule('http://*', '*')],
  // A second directive in the policy.
  ['http://x;sandbox', hostRule('http://x;sandbox', 'x;sandbox')],
  // A comma makes two header fields' worth of policy (RFC 9110 §5.3).
  ['http://a,b', hostRule('http://a,b', 'a,b')],
  // The same through percent-encoding, which the URL parser decodes in a host.
  ['http://a%2Cb', hostRule('http://a%2Cb', 'a,b')],
  ["http://'self'", hostRule("http://'self'", "'self'")],
  ['http://"x"', hostRule('http://"x"', '"x"')],
  ["'self'", `"'self'" is not a URL`],
  ['http://a b', '"http://a b" must not contain spaces or control characters'],
  // The URL parser would silently drop the tab.
  ['http://exa\tmple.net', '"http://exa?mple.net" must not contain spaces or control characters'],
  ['http://user@ipv4.example.net', 'must not carry credentials'],
  ['http://a_b.example.net', hostRule('http://a_b.example.net', 'a_b.example.net')],
  ['http://a..example.net', hostRule('http://a..example.net', 'a..example.net')],
  ['http://ipv4.example.net.', hostRule('http://ipv4.example.net.', 'ipv4.example.net.')],
];

/** An IPv6 literal with a zone index is no URL host; for NETDIAG_IPV6_URL. */
export const HOSTILE_IPV6_ORIGIN: [string, string] = ['http://[fe80::1%25eth0]:8080', '"http://[fe80::1%25eth0]:8080" is not a URL'];

/** [variable, value, the origin it stands for]: names, ports, IP literals and https stay accepted. */
export const GOOD_ORIGINS: [string, string, string][] = [
  ['NETDIAG_IPV4_URL', 'http://ipv4.example.net', 'http://ipv4.example.net'],
  ['NETDIAG_IPV4_URL', 'https://ipv4.example.net:8443/', 'https://ipv4.example.net:8443'],
  ['NETDIAG_IPV4_URL', 'http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
  ['NETDIAG_IPV4_URL', 'https://xn--bcher-kva.example', 'https://xn--bcher-kva.example'],
  ['NETDIAG_IPV6_URL', 'http://[2001:DB8::8]:8080', 'http://[2001:db8::8]:8080'],
  ['NETDIAG_IPV6_URL', 'https://ipv6-only.example.net', 'https://ipv6-only.example.net'],
];
