// The request's framing as RFC 9112 §3.2 has a server check it, over a real socket: an HTTP/1.1
// request with no Host, with two Host lines, or with a Host that is not a host gets a 400
// problem document with a request id (Node's own check answered a bare 400, and served two
// Host lines); an absolute-form target is served as its origin form (it was a 404); HTTP/1.0
// needs no Host. And `Accept` weights choose the form of `/` (RFC 9110 §12.5.1), through curl.
import { once } from 'node:events';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectContract } from '../support/contract.js';
import { curl } from '../support/curl.js';
import { startTestServer, type TestServer } from '../support/server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({});
});
afterAll(() => server.close());

interface RawReply {
  status: number;
  headers: Headers;
  body: string;
}

/** Writes `head` as it is on a new connection and reads until the server closes it. */
async function raw(head: string): Promise<RawReply> {
  const socket = connect(server.port, '127.0.0.1');
  await once(socket, 'connect');
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.write(head);
  // Every answer here is either a refusal that closes, or carries `Connection: close` asked for.
  await once(socket, 'close');
  const cut = text.indexOf('\r\n\r\n');
  const lines = text.slice(0, cut).split('\r\n');
  const headers = new Headers();
  for (const line of lines.slice(1)) headers.append(line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim());
  return { status: Number(/^HTTP\/1\.[01] ([0-9]{3})/.exec(lines[0] ?? '')?.[1]), headers, body: text.slice(cut + 4) };
}

function expectFramingProblem(reply: RawReply, words: RegExp): void {
  expect(reply.status).toBe(400);
  expect(reply.headers.get('content-type')).toBe('application/problem+json');
  expect(reply.headers.get('x-request-id')).toMatch(UUID);
  expect(reply.headers.get('connection')).toBe('close');
  const problem = JSON.parse(reply.body) as { code: string; detail: string; request_id: string };
  expect(problem.code).toBe('malformed_request');
  expect(problem.detail).toMatch(words);
  expect(problem.request_id).toBe(reply.headers.get('x-request-id'));
}

describe('Host (RFC 9112 §3.2)', () => {
  it('an HTTP/1.1 request without Host is a 400 problem document', async () => {
    expectFramingProblem(await raw('GET /v1/health HTTP/1.1\r\n\r\n'), /must carry a Host/);
  });

  it('the same through curl, which leaves Host out when told to', async () => {
    const res = await curl(`${server.url}/v1/health`, ['-H', 'Host:']);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('x-request-id')).toMatch(UUID);
    expect((res.body as { code: string }).code).toBe('malformed_request');
  });

  it('two Host lines are a 400, not served', async () => {
    expectFramingProblem(await raw('GET /v1/health HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n'), /more than one Host/);
    expectFramingProblem(await raw('GET /v1/health HTTP/1.1\r\nHost: a.test\r\nhOsT: a.test\r\n\r\n'), /more than one Host/);
  });

  it('a Host that is not a host and port is a 400', async () => {
    for (const host of ['a b', 'a/b', 'a.test:80x', 'user@a.test']) {
      expectFramingProblem(await raw(`GET /v1/health HTTP/1.1\r\nHost: ${host}\r\n\r\n`), /not a host name/);
    }
  });

  it('accepts the hosts clients send: names, ports, IPv4 and IPv6 literals, and none on HTTP/1.0', async () => {
    for (const host of ['netdiag.example', 'netdiag.example:8080', '127.0.0.1:80', '[::1]:8080', '[2001:db8::1]', 'under_score.test']) {
      const reply = await raw(`GET /v1/health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expect(reply.status, host).toBe(200);
    }
    expect((await raw('GET /v1/health HTTP/1.0\r\n\r\n')).status).toBe(200);
  });
});

describe('absolute-form targets (RFC 9112 §3.2.2)', () => {
  it('are served as their origin form, the query kept', async () => {
    const reply = await raw('GET http://netdiag.example/v1/health HTTP/1.1\r\nHost: netdiag.example\r\nConnection: close\r\n\r\n');
    expect(reply.status).toBe(200);
    expect((JSON.parse(reply.body) as { data: { status: string } }).data.status).toBeTypeOf('string');
    const problem = await raw('GET HTTP://netdiag.example/v1/dns/resolve?name=bad..name&type=A HTTP/1.1\r\nHost: netdiag.example\r\nConnection: close\r\n\r\n');
    expect(problem.status).toBe(400);
    const body = JSON.parse(problem.body) as { code: string; detail: string };
    expect(body.code).toBe('invalid_parameter');
    expect(body.detail).toMatch(/^name has an empty label/);
  });

  it('take their authority for the problem type URIs, not the Host field', async () => {
    const reply = await raw('GET http://target.example/nowhere HTTP/1.1\r\nHost: host.example\r\nConnection: close\r\n\r\n');
    expect(reply.status).toBe(404);
    expect((JSON.parse(reply.body) as { type: string }).type).toMatch(/^http:\/\/target\.example\//);
  });

  it('through curl', async () => {
    const res = await curl(`${server.url}/`, ['--request-target', `${server.url}/v1/health`]);
    expect(res.status).toBe(200);
    expectContract('GET', '/v1/health', res);
  });
});

describe('Accept weights choose the form of / (RFC 9110 §12.5.1)', () => {
  it('text/html;q=0 refuses the page', async () => {
    const res = await curl(`${server.url}/`, ['-H', 'Accept: text/html;q=0, text/plain']);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.text).toBe('127.0.0.1\n');
  });

  it('a lower weight loses to a higher one, either way', async () => {
    const text = await curl(`${server.url}/`, ['-H', 'Accept: application/json;q=0.4, text/plain;q=0.9']);
    expect(text.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const json = await curl(`${server.url}/`, ['-H', 'Accept: text/plain;q=0.4, application/json']);
    expect(json.headers.get('content-type')).toBe('application/json');
    const page = await curl(`${server.url}/`, ['-H', 'Accept: text/plain;q=0.5, text/html']);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('a text route names its problem in JSON only when JSON is preferred', async () => {
    const text = await curl(`${server.url}/city?ip=nowhere`, ['-H', 'Accept: application/json;q=0, text/plain']);
    expect(text.status).toBe(400);
    expect(text.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const json = await curl(`${server.url}/city?ip=nowhere`, ['-H', 'Accept: text/plain;q=0.1, application/problem+json']);
    expect(json.status).toBe(400);
    expect(json.headers.get('content-type')).toBe('application/problem+json');
  });

  it('a missing field is an empty line unless JSON is preferred, then a 404 problem', async () => {
    const text = await curl(`${server.url}/city`, ['-H', 'Accept: application/json;q=0, text/plain']);
    expect([text.status, text.text, text.headers.get('content-type')]).toEqual([200, '\n', 'text/plain; charset=utf-8']);
    const json = await curl(`${server.url}/city`, ['-H', 'Accept: text/plain;q=0.1, application/problem+json']);
    expect(json.status).toBe(404);
    expect(json.headers.get('content-type')).toBe('application/problem+json');
  });
});
