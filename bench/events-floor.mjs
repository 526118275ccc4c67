// node bench/events-floor.mjs [--rounds 3]
//
// The floor under the events route's goal: a hand-written node:http server that does only what
// the intake must (read the body from its events, JSON.parse, two field checks, a keyed hash,
// queue the event, answer 202 with the service's headers and envelope; no router, schema,
// limiter or delivery), loaded like `npm run bench`'s events route in interleaved rounds with
// the bare baseline server. docs/benchmarks.md ("The events goal against the floor") quotes it.
import { createServer } from 'node:http';
import { hash, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { load, median, serviceLikeHeaders, startChild } from './lib.mjs';

if (process.argv[2] === '--serve') {
  const UUID = /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/;
  const queue = [];
  const server = createServer((req, res) => {
    const chunks = [];
    hash('sha256', `secret${req.socket.remoteAddress}`, 'base64url');
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const event = JSON.parse((chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8'));
      if (typeof event.event !== 'string' || !UUID.test(event.event_id)) {
        res.writeHead(400).end();
        return;
      }
      queue.push({ event: event.event, event_id: event.event_id, properties: { ...event.properties }, received_at: new Date().toISOString() });
      if (queue.length > 1000) queue.length = 0;
      const id = randomUUID();
      const body = `{"data":{"accepted":true},"meta":{"api_version":"v1","request_id":"${id}","requested_at":"${new Date().toISOString()}"}}`;
      res.writeHead(202, serviceLikeHeaders(id, body));
      res.end(body);
    });
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
} else {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' } } });
  const EVENT = JSON.stringify({ event: 'speed_test_completed', event_id: '3b241101-e2bb-4255-8caf-4136c566a962', properties: { source: 'cli', mode: 'full', download_mbps: 412.5, upload_mbps: 38.2, latency_ms: 11.4, jitter_ms: 1.2, tool_version: '1.4.0' } });
  const servers = {
    bare: [fileURLToPath(new URL('./baseline-server.mjs', import.meta.url)), '148'],
    floor: [fileURLToPath(import.meta.url), '--serve'],
  };
  const results = { bare: [], floor: [] };
  for (let i = 0; i < Number(values.rounds); i++) {
    for (const [name, args] of Object.entries(servers)) {
      const server = await startChild(process.execPath, args, {}, (line) => Number(line));
      results[name].push(await load({ url: `http://127.0.0.1:${server.port}/v1/events`, method: 'POST', headers: { 'Content-Type': 'application/json' }, body: EVENT, pid: server.child.pid, duration: 5, connections: 32 }));
      await server.stop();
    }
  }
  const m = (name, key) => median(results[name].map((r) => r[key]));
  console.log(`floor ${Math.round(m('floor', 'rps'))} req/s, ${m('floor', 'cpuUsPerReq').toFixed(1)} µs a request; bare ${Math.round(m('bare', 'rps'))} req/s, ${m('bare', 'cpuUsPerReq').toFixed(1)} µs; ratio ${(m('floor', 'rps') / m('bare', 'rps')).toFixed(2)}`);
}
