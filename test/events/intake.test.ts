// POST /v1/events over real sockets: media type, size bound while streaming, JSON, schema and
// its bounds, undeclared fields, prototype keys; the log, none and HTTP sinks against a real
// collector that accepts, fails or hangs; queue bound; shutdown flush; privacy across routes.
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCollector, type Collector } from '../support/collector.js';
import { removeCertificates, selfSignedCertificate } from '../support/doh-relay.js';
import { expectContract } from '../support/contract.js';
import { send, type Reply } from '../support/http.js';
import { serveCli } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { eventually, freePort } from '../support/wait.js';

const LIMITS = { NETDIAG_RATE_LIMITS: 'events=100000,ip=100000,dns=100000,probe=100000' };

const event = (properties: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  event: 'speed_test_completed',
  event_id: randomUUID(),
  properties: { source: 'web', ...properties },
  ...extra,
});

function post(server: TestServer, body: unknown, headers: Record<string, string> = { 'Content-Type': 'application/json' }): Promise<Reply> {
  return send(`${server.url}/v1/events`, { method: 'POST', headers, body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body) });
}

const problemOf = (res: Reply) => res.body as { code: string; detail: string };

describe('POST /v1/events: input discipline', () => {
  let server: TestServer;
  const analytics = () => server.logs().filter((l) => l.msg === 'analytics event').map((l) => l.analytics as Record<string, unknown>);
  beforeAll(async () => {
    server = await startTestServer({ ...LIMITS, NETDIAG_EVENTS_SINK: 'log' });
  });
  afterAll(async () => {
    await server.close();
  });

  it('accepts a valid event with 202 and logs exactly the event plus its receive time', async () => {
    const body = event({ mode: 'full', download_mbps: 93.4, latency_ms: 12 });
    const res = await post(server, body);
    expect(res.status).toBe(202);
    expectContract('POST', '/v1/events', res);
    expect((res.body as { data: unknown }).data).toEqual({ accepted: true });
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('ratelimit-limit')).toBe('100000');
    const logged = analytics().find((e) => e.event_id === body.event_id);
    expect(logged).toEqual({ ...body, received_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) as unknown });
  });

  it.each([
    ['no Content-Type', {}],
    ['text/plain', { 'Content-Type': 'text/plain' }],
    ['application/jsonp', { 'Content-Type': 'application/jsonp' }],
    ['JSON in another charset', { 'Content-Type': 'application/json; charset=iso-8859-1' }],
    ['form data', { 'Content-Type': 'application/x-www-form-urlencoded' }],
  ])('415 for %s', async (_label, headers) => {
    const res = await post(server, event(), headers);
    expect(res.status).toBe(415);
    expect(problemOf(res).code).toBe('unsupported_media_type');
    expectContract('POST', '/v1/events', res);
  });

  it.each([['application/json; charset=utf-8'], ['Application/JSON'], ['application/json;charset="UTF-8"']])('accepts Content-Type %s', async (type) => {
    expect((await post(server, event(), { 'Content-Type': type })).status).toBe(202);
  });

  /** A valid event padded (with an undeclared, dropped property) to exactly `size` bytes. */
  const sized = (size: number) => {
    const base = JSON.stringify(event({ pad: '' }));
    return base.replace('"pad":""', `"pad":"${'x'.repeat(size - Buffer.byteLength(base))}"`);
  };

  it('4096 bytes are accepted; 4097 are 413, with Content-Length and chunked without it', async () => {
    expect(Buffer.byteLength(sized(4096))).toBe(4096);
    expect((await post(server, sized(4096))).status).toBe(202);
    const declared = await post(server, sized(4097));
    expect(declared.status).toBe(413);
    expect(problemOf(declared).code).toBe('payload_too_large');
    expectContract('POST', '/v1/events', declared);
    const chunked = await post(server, sized(4097), { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    expect(chunked.status).toBe(413);
  });

  it('answers 413 while an unbounded chunked body is still arriving, and closes the connection', async () => {
    const socket = connect(server.port, '127.0.0.1');
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString()));
    const closed = new Promise<void>((resolve) => socket.on('close', () => { resolve(); }));
    socket.write(`POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    // 8 KiB sent, no terminating chunk: a server that waited for the end would never answer.
    for (let i = 0; i < 8; i++) socket.write(`400\r\n${'x'.repeat(1024)}\r\n`);
    expect(await eventually(() => received.includes('\r\n\r\n'), 3000)).toBe(true);
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(received.toLowerCase()).toContain('connection: close');
    await closed;
  });

  it('a declared Content-Length over the bound is refused before the body is sent', async () => {
    const socket = connect(server.port, '127.0.0.1');
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString()));
    socket.write(`POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n`);
    expect(await eventually(() => received.includes('\r\n\r\n'), 3000)).toBe(true);
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    socket.destroy();
  });

  it.each([
    ['malformed JSON', '{"event":'],
    ['an empty body', ''],
    ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
  ])('400 invalid_json for %s', async (_label, body) => {
    const res = await post(server, body);
    expect(res.status).toBe(400);
    expect(problemOf(res).code).toBe('invalid_json');
    expectContract('POST', '/v1/events', res);
  });

  // Each bound at its edge (accepted) and just past it (400 naming the field).
  const bounds: [string, number, number][] = [
    ['duration_ms', 0, 3_600_000],
    ['download_mbps', 0, 1_000_000],
    ['upload_mbps', 0, 1_000_000],
    ['latency_ms', 0, 600_000],
    ['jitter_ms', 0, 600_000],
  ];
  it.each(bounds)('%s: %d and %d pass, just outside fails', async (field, min, max) => {
    expect((await post(server, event({ [field]: min }))).status).toBe(202);
    expect((await post(server, event({ [field]: max }))).status).toBe(202);
    expect((await post(server, event({ [field]: max / 2 + 0.5 }))).status).toBe(202);
    for (const bad of [min - 0.001, max + 0.001, String(max), true, null]) {
      const res = await post(server, event({ [field]: bad }));
      expect(res.status, `${field}=${String(bad)}`).toBe(400);
      expect(problemOf(res).code).toBe('invalid_event');
      expect(problemOf(res).detail).toContain(`properties.${field}`);
    }
  });

  const enums: [string, string[]][] = [
    ['source', ['web', 'cli', 'terraform', 'desktop', 'mobile', 'api']],
    ['mode', ['light', 'full']],
    ['streaming_quality', ['bad', 'poor', 'average', 'good', 'great', 'pending']],
    ['gaming_quality', ['bad', 'poor', 'average', 'good', 'great', 'pending']],
    ['video_call_quality', ['bad', 'poor', 'average', 'good', 'great', 'pending']],
    ['failure_reason', ['engine_error', 'engine_load_error', 'network_error', 'cancelled', 'timeout']],
  ];
  it.each(enums)('%s accepts exactly its values', async (field, values) => {
    for (const value of values) expect((await post(server, event({ [field]: value }))).status, value).toBe(202);
    for (const bad of ['WEB', 'excellent', '', 1]) {
      const res = await post(server, event({ [field]: bad }));
      expect(res.status, `${field}=${String(bad)}`).toBe(400);
      expect(problemOf(res).detail).toContain(`properties.${field}`);
    }
  });

  it('tool_version: 40 characters pass, 41 fail', async () => {
    expect((await post(server, event({ tool_version: 'v'.repeat(40) }))).status).toBe(202);
    const res = await post(server, event({ tool_version: 'v'.repeat(41) }));
    expect(res.status).toBe(400);
    expect(problemOf(res).detail).toContain('properties.tool_version');
  });

  it.each([
    ['an unknown event name', { ...event(), event: 'speed_test_paused' }, 'event'],
    ['an event_id that is not a UUID', { ...event(), event_id: 'session-42' }, 'event_id'],
    ['no properties', { event: 'speed_test_started', event_id: randomUUID() }, 'properties'],
    ['properties without source', { event: 'speed_test_started', event_id: randomUUID(), properties: {} }, 'source'],
    ['properties that are not an object', { ...event(), properties: [] }, 'properties'],
    ['a top-level array', [event()], 'the event'],
    ['an undeclared top-level field', event({}, { ip: '203.0.113.9' }), '"ip"'],
    ['__proto__ at the top level', '{"__proto__":{"polluted":1},"event":"speed_test_started","event_id":"3b241101-e2bb-4255-8caf-4136c566a962","properties":{"source":"web"}}', '"__proto__"'],
  ])('400 invalid_event for %s, naming it', async (_label, body, named) => {
    const res = await post(server, body);
    expect(res.status).toBe(400);
    expect(problemOf(res).code).toBe('invalid_event');
    expect(problemOf(res).detail).toContain(named);
    expectContract('POST', '/v1/events', res);
  });

  it('drops undeclared properties and prototype keys; nothing reaches Object.prototype', async () => {
    const id = randomUUID();
    const raw = `{"event":"speed_test_shared","event_id":"${id}","properties":{"source":"cli","mode":"light","city":"Utrecht","__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}}`;
    const res = await post(server, raw);
    expect(res.status).toBe(202);
    const logged = analytics().find((e) => e.event_id === id);
    expect(logged?.properties).toEqual({ source: 'cli', mode: 'light' });
    expect(Object.keys(logged?.properties as object)).toEqual(['source', 'mode']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('event sinks', () => {
  it('none: accepted, and nothing written anywhere', async () => {
    const server = await startTestServer({ ...LIMITS, NETDIAG_EVENTS_SINK: 'none' });
    try {
      const body = event();
      expect((await post(server, body)).status).toBe(202);
      expect(server.rawLogs()).not.toContain(body.event_id);
    } finally {
      await server.close();
    }
  });

  describe('HTTP collector', () => {
    let collector: Collector;
    let server: TestServer;
    beforeAll(async () => {
      collector = await startCollector();
      server = await startTestServer({ ...LIMITS, NETDIAG_EVENTS_SINK: collector.url });
    });
    afterAll(async () => {
      await server.close();
      await collector.close();
    });

    it('delivers every event as NDJSON, batched, each exactly the event plus received_at', async () => {
      collector.mode = 'accept';
      const before = collector.batches.length;
      const sent = Array.from({ length: 30 }, () => event({ mode: 'light' }));
      const replies = await Promise.all(sent.map((e) => post(server, e)));
      expect(replies.every((r) => r.status === 202)).toBe(true);
      expect(await eventually(() => collector.events().filter((e) => sent.some((s) => s.event_id === e.event_id)).length === 30, 5000)).toBe(true);
      // 30 events in one burst travel in far fewer POSTs than events.
      expect(collector.batches.length - before).toBeLessThan(10);
      for (const delivered of collector.events().filter((e) => sent.some((s) => s.event_id === e.event_id))) {
        expect(Object.keys(delivered).sort()).toEqual(['event', 'event_id', 'properties', 'received_at']);
      }
    });

    it('a failing collector (500) changes nothing for the client; events arrive once it recovers', async () => {
      collector.mode = 'fail';
      const sent = [event(), event()];
      for (const e of sent) expect((await post(server, e)).status).toBe(202);
      expect(await eventually(() => collector.attempts > 0 && server.logs().some((l) => l.msg === 'analytics collector failing; events are queued'), 3000)).toBe(true);
      // The log names the class of failure, never the collector's own text.
      expect(server.logs().find((l) => l.msg === 'analytics collector failing; events are queued')?.reason).toBe('status_500');
      expect((await send(`${server.url}/v1/health`)).status).toBe(200);
      collector.mode = 'accept';
      expect(await eventually(() => sent.every((s) => collector.events().some((e) => e.event_id === s.event_id)), 6000)).toBe(true);
      // The collector has the batch before the sink has its answer and logs the recovery.
      expect(await eventually(() => server.logs().some((l) => l.msg === 'analytics collector reachable again'), 2000)).toBe(true);
    });

    it('a hanging collector: the POST still answers 202 at once and the service stays healthy', async () => {
      collector.mode = 'hang';
      const replies = [];
      let slowest = 0;
      for (let i = 0; i < 20; i++) {
        const started = performance.now();
        replies.push(await post(server, event()));
        slowest = Math.max(slowest, performance.now() - started);
      }
      expect(replies.every((r) => r.status === 202)).toBe(true);
      // 20 requests while the sink waits on a collector that never answers: not one of them waits
      // for the sink's 2 s deadline (a request that did would take at least that long).
      expect(slowest).toBeLessThan(2000);
      expect((await send(`${server.url}/v1/health`)).status).toBe(200);
      // The POST's 2 s deadline ends the wait and the log says it was a timeout.
      expect(await eventually(() => server.logs().some((l) => l.msg === 'analytics collector failing; events are queued' && l.reason === 'TimeoutError'), 4000)).toBe(true);
      collector.mode = 'accept';
    });
  });

  it('the queue bound holds: the oldest events are dropped and counted, the newest delivered', async () => {
    const collector = await startCollector('fail');
    const server = await startTestServer({ ...LIMITS, NETDIAG_EVENTS_SINK: collector.url, NETDIAG_EVENTS_QUEUE: '5' });
    try {
      const sent = Array.from({ length: 12 }, () => event());
      for (const e of sent) expect((await post(server, e)).status).toBe(202);
      expect(server.logs().filter((l) => l.msg === 'analytics queue full: dropping the oldest events')).toHaveLength(1);
      expect(await eventually(() => collector.attempts > 0, 3000)).toBe(true);
      collector.mode = 'accept';
      expect(await eventually(() => collector.events().length === 5, 6000)).toBe(true);
      expect(collector.events().map((e) => e.event_id)).toEqual(sent.slice(7).map((e) => e.event_id));
      // The collector has the batch before the sink has its answer and logs the recovery.
      const recoveredLine = () => server.logs().find((l) => l.msg === 'analytics collector reachable again');
      await eventually(() => recoveredLine() !== undefined, 2000);
      const recovered = recoveredLine();
      expect(recovered?.dropped).toBe(7);
    } finally {
      await server.close();
      await collector.close();
    }
  });

  it('credentials in the collector URL are sent as Basic authentication and never logged', async () => {
    const collector = await startCollector('accept', 0, 'us@er:p:w');
    const withCredentials = collector.url.replace('http://', 'http://us%40er:p%3Aw@');
    const server = await startTestServer({ ...LIMITS, NETDIAG_EVENTS_SINK: withCredentials, NETDIAG_LOG_LEVEL: 'debug' });
    try {
      const sent = event();
      expect((await post(server, sent)).status).toBe(202);
      expect(await eventually(() => collector.events().some((e) => e.event_id === sent.event_id), 3000)).toBe(true);
      expect(collector.authorizations[0]).toBe(`Basic ${Buffer.from('us@er:p:w').toString('base64')}`);
      expect(server.logs().some((l) => l.msg === 'analytics collector failing; events are queued')).toBe(false);
      for (const secret of ['p:w', 'p%3Aw', Buffer.from('us@er:p:w').toString('base64')]) expect(server.rawLogs()).not.toContain(secret);
    } finally {
      await server.close();
      await collector.close();
    }
  });

  it('wrong collector credentials are logged as status_401, without the credentials', async () => {
    const collector = await startCollector('accept', 0, 'user:right');
    const server = await startTestServer({ ...LIMITS, NETDIAG_EVENTS_SINK: collector.url.replace('http://', 'http://user:wrong@') });
    try {
      expect((await post(server, event())).status).toBe(202);
      expect(await eventually(() => server.logs().some((l) => l.msg === 'analytics collector failing; events are queued'), 3000)).toBe(true);
      expect(server.logs().find((l) => l.msg === 'analytics collector failing; events are queued')?.reason).toBe('status_401');
      expect(server.rawLogs()).not.toContain('wrong');
    } finally {
      await server.close();
      await collector.close();
    }
  });

  it('a client that aborts mid-body is not logged as an error', async () => {
    const server = await startTestServer({ ...LIMITS, NETDIAG_EVENTS_SINK: 'log' });
    try {
      const socket = connect(server.port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write('POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"event":');
      await new Promise((r) => setTimeout(r, 100));
      socket.destroy();
      await new Promise((r) => setTimeout(r, 200));
      expect(server.logs().filter((l) => l.level === 'error')).toEqual([]);
      expect((await send(`${server.url}/v1/health`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('a collector with nothing listening is logged as ECONNREFUSED, and the intake still answers 202', async () => {
    const port = await freePort();
    const server = await startTestServer({ ...LIMITS, NETDIAG_EVENTS_SINK: `http://127.0.0.1:${String(port)}/ingest` });
    try {
      expect((await post(server, event())).status).toBe(202);
      expect(await eventually(() => server.logs().some((l) => l.msg === 'analytics collector failing; events are queued'), 3000)).toBe(true);
      expect(server.logs().find((l) => l.msg === 'analytics collector failing; events are queued')?.reason).toBe('ECONNREFUSED');
    } finally {
      await server.close();
    }
  });

  it('an overload that outlasts many deliveries logs its drops once, not once per batch', async () => {
    // A collector that takes 150 ms a POST and a queue of 5: events arrive faster than they
    // leave for about 1.5 s, with several deliveries in between, each followed by more drops.
    const collector = await startCollector('accept', 150);
    const server = await startTestServer({ ...LIMITS, NETDIAG_EVENTS_SINK: collector.url, NETDIAG_EVENTS_QUEUE: '5' });
    try {
      for (let i = 0; i < 60; i++) {
        expect((await post(server, event())).status).toBe(202);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(await eventually(() => collector.batches.length >= 4, 3000)).toBe(true);
      const warnings = server.logs().filter((l) => l.msg === 'analytics queue full: dropping the oldest events');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.dropped).toBe(1);
    } finally {
      await server.close();
      await collector.close();
    }
  });

  it('SIGTERM flushes the queue to the collector before the process exits 0', async () => {
    // A slow collector (300 ms a POST) and a burst just before the signal.
    const collector = await startCollector('accept', 300);
    const serving = await serveCli({ ...LIMITS, NETDIAG_EVENTS_SINK: collector.url });
    try {
      const sent = Array.from({ length: 250 }, () => event());
      const url = `http://127.0.0.1:${String(serving.port)}/v1/events`;
      await Promise.all(sent.map((e) => send(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(e) })));
      serving.child.kill('SIGTERM');
      expect(await serving.exited).toBe(0);
      const delivered = new Set(collector.events().map((e) => e.event_id));
      expect(sent.filter((e) => !delivered.has(e.event_id))).toEqual([]);
    } finally {
      serving.child.kill('SIGKILL');
      await collector.close();
    }
  });

  it('a collector named by an https: URL receives the events over TLS, its certificate checked against the CA the operator names', async () => {
    const certificate = selfSignedCertificate();
    const collector = await startCollector('accept', 0, undefined, certificate);
    // NODE_EXTRA_CA_CERTS: how an operator trusts a private CA; without it the POST is refused.
    const trusted = await serveCli({ ...LIMITS, NETDIAG_EVENTS_SINK: collector.url, NODE_EXTRA_CA_CERTS: certificate.certFile });
    const untrusted = await serveCli({ ...LIMITS, NETDIAG_EVENTS_SINK: collector.url });
    try {
      const sent = event();
      const postTo = (port: number, e: Record<string, unknown>) =>
        send(`http://127.0.0.1:${String(port)}/v1/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(e) });
      expect((await postTo(trusted.port, sent)).status).toBe(202);
      expect(await eventually(() => collector.events().some((e) => e.event_id === sent.event_id), 3000)).toBe(true);
      expect((await postTo(untrusted.port, event())).status).toBe(202);
      expect(await eventually(() => untrusted.stdout().includes('analytics collector failing'), 3000)).toBe(true);
      expect(untrusted.stdout()).toContain('"reason":"DEPTH_ZERO_SELF_SIGNED_CERT"');
      expect(collector.events().map((e) => e.event_id)).toEqual([sent.event_id]);
    } finally {
      trusted.child.kill('SIGKILL');
      untrusted.child.kill('SIGKILL');
      await collector.close();
      removeCertificates();
    }
  });
});

describe('privacy: a distinctive caller leaves no trace', () => {
  const ADDRESS = '203.0.113.77';
  const AGENT = 'NetdiagPrivacyCanary/7.7 (do-not-log)';

  it('neither the forwarded address nor the User-Agent appears in any log line or collector payload', async () => {
    const collector = await startCollector();
    // The caller's address is documentation space: its PTR is asked through the DNS route once the
    // operator allows special-use reverse zones, so its reverse name is really made and sent.
    const common = { ...LIMITS, NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_ACCESS_LOG: 'on', NETDIAG_LOG_LEVEL: 'debug', NETDIAG_IP_PARAM_SPECIAL_PTR: 'on' };
    const logged = await startTestServer({ ...common, NETDIAG_EVENTS_SINK: 'log' });
    const shipped = await startTestServer({ ...common, NETDIAG_EVENTS_SINK: collector.url });
    try {
      const headers = { 'X-Forwarded-For': ADDRESS, Forwarded: `for=${ADDRESS}`, 'User-Agent': AGENT };
      const requestIds: string[] = [];
      for (const server of [logged, shipped]) {
        const calls: [string, string, string | undefined][] = [
          ['GET', '/v1/ip', undefined],
          ['GET', '/v1/dns/resolve?name=example.com&type=A', undefined],
          ['GET', '/v1/dns/resolve?name=203.0.113.77&type=PTR', undefined],
          ['GET', '/v1/latency/regions', undefined],
          ['GET', '/v1/latency/regions/weur/probe', undefined],
          ['GET', '/v1/speed-test/configuration', undefined],
          ['GET', '/v1/health', undefined],
          ['GET', '/v1/openapi.json', undefined],
          ['GET', '/v1/nowhere', undefined],
          ['DELETE', '/v1/health', undefined],
          ['POST', '/v1/events', JSON.stringify(event({ tool_version: '1.0' }))],
          ['POST', '/v1/events', JSON.stringify(event({}, { ip: ADDRESS }))],
          ['POST', '/v1/events', '{"broken'],
        ];
        for (const [method, path, body] of calls) {
          const res = await send(`${server.url}${path}`, { method, headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' }, body });
          requestIds.push(res.headers.get('x-request-id') ?? '');
        }
      }
      expect(await eventually(() => collector.events().length === 1, 3000)).toBe(true);
      const everything = [logged.rawLogs(), shipped.rawLogs(), ...collector.batches].join('\n');
      // The access log did write a line per request, so the check is over real output.
      expect(logged.logs().filter((l) => l.route !== undefined).length).toBeGreaterThanOrEqual(12);
      expect(everything).not.toContain(ADDRESS);
      expect(everything).not.toContain('77.113.0.203'); // nor its reverse name
      expect(everything).not.toContain('NetdiagPrivacyCanary');
      // Sink payloads carry no request id either.
      for (const id of requestIds) expect(collector.batches.join('\n')).not.toContain(id);
    } finally {
      await logged.close();
      await shipped.close();
      await collector.close();
    }
  });
});
