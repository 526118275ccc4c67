// node bench/ip-floor.mjs [--rounds 3]          (alone: bare, floor and service in interleaved rounds)
// node bench/ip-floor.mjs --serve <upstream port> (started by `npm run bench`, route `ip`)
//
// The floor under /v1/ip's distinct-caller goal: a hand-written node:http server that does only
// what the route must for a new caller (take the address from X-Forwarded-For, count it against
// the per-source limit the contract requires, under a keyed hash of the address as the privacy
// rule requires, and say the count in the RateLimit headers; ask its PTR over one of four
// connected UDP sockets with a random ID and match the reply by ID; look the address up in the
// same compiled city and ASN tables; answer JSON with the service's headers), with no router,
// coalescing, deadline, question check or schema of the answer. The count is kept in the
// service's own in-process table (MemoryLimiterStore), as the floor looks up the service's own
// geo tables: the floor pays for counting what the service pays, not for a slower way to count. Loaded like
// `npm run bench`'s `ip` route (a new public caller each request, the same Node upstream), in
// interleaved rounds with the bare baseline and the service itself. Needs `npm run build`.
import { hash } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import { isIPv4 } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { listeningPort, load, median, serviceLikeHeaders, startChild } from './lib.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

if (process.argv[2] === '--serve') {
  const { embeddedCityTable } = await import(`${root}/dist/runtime/node/ports/geo-lookup/city-table.js`);
  const { embeddedAsn } = await import(`${root}/dist/runtime/node/ports/geo-lookup/asn-table.js`);
  const { MemoryLimiterStore } = await import(`${root}/dist/core/ratelimit/memory-store.js`);
  const city = embeddedCityTable();
  const asn = embeddedAsn();
  const upstreamPort = Number(process.argv[3]);
  const pending = new Map();
  const sockets = Array.from({ length: 4 }, () => {
    const socket = createSocket('udp4');
    socket.connect(upstreamPort, '127.0.0.1');
    socket.on('message', (message) => {
      const id = message.readUInt16BE(0);
      const done = pending.get(id);
      if (done !== undefined) {
        pending.delete(id);
        done(message);
      }
    });
    return socket;
  });
  let next = 0;
  /** The PTR query for a dotted IPv4 address: header, the reverse name as labels, QTYPE 12, QCLASS 1. */
  const ptrQuery = (id, dotted) => {
    const labels = [...dotted.split('.').reverse(), 'in-addr', 'arpa'];
    const query = Buffer.alloc(12 + labels.reduce((n, l) => n + 1 + l.length, 0) + 1 + 4);
    query.writeUInt16BE(id, 0);
    query.writeUInt16BE(0x0100, 2);
    query.writeUInt16BE(1, 4);
    let at = 12;
    for (const label of labels) {
      query[at++] = label.length;
      at += query.write(label, at, 'latin1');
    }
    query[at++] = 0;
    query.writeUInt16BE(12, at);
    query.writeUInt16BE(1, at + 2);
    return query;
  };
  /** Past a name at `at`: labels up to the root, or up to a compression pointer (two octets). */
  const skipName = (reply, at) => {
    while (reply[at] !== 0 && (reply[at] & 0xc0) !== 0xc0) at += 1 + reply[at];
    return at + (reply[at] === 0 ? 1 : 2);
  };
  /** The first answer's target (the only record the bench upstream sends), following compression pointers. */
  const ptrTarget = (reply) => {
    let at = skipName(reply, 12) + 4;
    at = skipName(reply, at) + 10;
    const labels = [];
    for (let hops = 0; hops < 20 && reply[at] !== 0; hops++) {
      if ((reply[at] & 0xc0) === 0xc0) at = reply.readUInt16BE(at) & 0x3fff;
      else {
        labels.push(reply.toString('latin1', at + 1, at + 1 + reply[at]));
        at += 1 + reply[at];
      }
    }
    return labels.join('.');
  };
  // The contract's per-source limit, per 60 s window: the key never holds the address itself.
  const secret = randomBytes(32).toString('base64');
  const LIMIT = 100_000_000;
  const WINDOW_MS = 60_000;
  const windows = new MemoryLimiterStore({ now: () => Date.now() });
  const server = createServer((req, res) => {
    const text = req.headers['x-forwarded-for'];
    if (typeof text !== 'string' || !isIPv4(text)) {
      res.writeHead(400).end();
      return;
    }
    const key = hash('sha256', secret + text, 'base64url');
    const now = Date.now();
    const window = windows.hitAt(`ip:${key}`, WINDOW_MS, now);
    if (window.count > LIMIT) {
      res.writeHead(429).end();
      return;
    }
    const rate = { limit: LIMIT, remaining: LIMIT - window.count, reset: Math.ceil((window.resetAt - now) / 1000) };
    const words = text.split('.').map(Number);
    const address = { v4: ((words[0] << 24) | (words[1] << 16) | (words[2] << 8) | words[3]) >>> 0 };
    let id;
    do id = randomBytes(2).readUInt16BE(0);
    while (pending.has(id));
    const location = city.city(address);
    const network = asn.asn(address);
    pending.set(id, (reply) => {
      const requestId = randomUUID();
      const body = JSON.stringify({
        data: { address: text, ip_version: 'ipv4', reverse_hostname: ptrTarget(reply), network: network ?? { asn: null, organization: null }, location: location ?? null, connection: { provider_colo: null, http_protocol: null, tls_version: null }, data_provenance: 'observed_connection' },
        meta: { api_version: 'v1', request_id: requestId, requested_at: new Date().toISOString() },
      });
      res.writeHead(200, serviceLikeHeaders(requestId, body, rate));
      res.end(body);
    });
    sockets[next].send(ptrQuery(id, text));
    next = (next + 1) % sockets.length;
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
} else {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
  const upstream = await startChild(process.execPath, [fileURLToPath(new URL('./dns-upstream.mjs', import.meta.url))], {}, (line) => Number(line));
  const service = {
    command: [`${root}/dist/cli/main.js`, 'serve'],
    env: { PORT: '0', HOST: '127.0.0.1', NETDIAG_RATE_LIMITS: 'ip=100000000', NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${upstream.port}` },
    ready: listeningPort,
  };
  const numeric = (line) => Number(line);
  const servers = {
    bare: { command: [fileURLToPath(new URL('./baseline-server.mjs', import.meta.url)), '550'], env: {}, ready: numeric },
    floor: { command: [fileURLToPath(import.meta.url), '--serve', String(upstream.port)], env: {}, ready: numeric },
    service,
  };
  const results = { bare: [], floor: [], service: [] };
  for (let i = 0; i < Number(values.rounds); i++) {
    for (const [name, { command, env, ready }] of Object.entries(servers)) {
      const server = await startChild(process.execPath, command, env, ready);
      const path = name === 'bare' ? '/' : '/v1/ip';
      results[name].push(await load({ url: `http://127.0.0.1:${server.port}${path}`, pid: server.child.pid, duration: 5, connections: 32, callerHeader: 'X-Forwarded-For' }));
      await server.stop();
    }
  }
  await upstream.stop();
  const m = (name, key) => median(results[name].map((r) => r[key]));
  for (const name of ['floor', 'service']) {
    const bad = results[name].reduce((n, r) => n + r.bad, 0);
    console.log(`${name} ${Math.round(m(name, 'rps'))} req/s, ${m(name, 'cpuUsPerReq').toFixed(1)} µs a request, ratio ${(m(name, 'rps') / m('bare', 'rps')).toFixed(2)}${bad > 0 ? `, ${bad} failed` : ''}`);
  }
  console.log(`bare ${Math.round(m('bare', 'rps'))} req/s, ${m('bare', 'cpuUsPerReq').toFixed(1)} µs a request`);
}
