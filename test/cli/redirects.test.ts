// The command line's API calls against FAKE deployments that a real netdiag never is (issue 69):
// one that redirects to another server, which the CLI must not follow (it would print another
// server's answer as this one's), one that redirects within itself, which it follows, and one
// whose /v1/ip answer lacks the objects the table reads, which must end in words, not a TypeError.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/process.js';

const meta = { request_id: '00000000-0000-4000-8000-000000000000', timestamp: '2025-01-01T00:00:00.000Z' };
const DNS = { query: { name: 'example.test', type: 'A' }, response_code: 'no_error', answers: [{ type: 'A', name: 'example.test', ttl_seconds: 60, address: '192.0.2.66' }] };

/** A FAKE deployment: `answer` decides each request; every path asked is kept. */
async function fake(answer: (path: string, origin: string) => { status: number; headers?: Record<string, string>; body?: unknown }): Promise<{ origin: string; asked: string[]; server: Server }> {
  const asked: string[] = [];
  let origin = '';
  const server = createServer((req, res) => {
    asked.push(req.url ?? '');
    const { status, headers = {}, body } = answer(req.url ?? '', origin);
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(body === undefined ? '' : JSON.stringify(body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  return { origin, asked, server };
}

describe('API calls and redirects', () => {
  let other: Awaited<ReturnType<typeof fake>>;
  let away: Awaited<ReturnType<typeof fake>>;
  let within: Awaited<ReturnType<typeof fake>>;
  let hollow: Awaited<ReturnType<typeof fake>>;

  beforeAll(async () => {
    other = await fake(() => ({ status: 200, body: { data: DNS, meta } }));
    away = await fake((path) => ({ status: 302, headers: { Location: `${other.origin}${path}` } }));
    within = await fake((path) => (path.startsWith('/v1/') ? { status: 307, headers: { Location: `/moved${path}` } } : { status: 200, body: { data: DNS, meta } }));
    hollow = await fake(() => ({ status: 200, body: { data: { address: '127.0.0.1', ip_version: 'ipv4' }, meta } }));
  });
  afterAll(() => {
    for (const f of [other, away, within, hollow]) f.server.close();
  });

  it('a redirect to another server is refused, naming it, and that server is asked nothing', async () => {
    const run = await runCli(['dns', '--url', away.origin, 'example.test', 'A'], {}, 30_000);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`netdiag: ${away.origin}/v1/dns/resolve?name=example.test&type=A redirected to ${other.origin}, another server; netdiag follows no redirect away from the server it was given (if you trust that one, give it with --url ${other.origin})\n`);
    expect(run.stdout).toBe('');
    expect(other.asked).toEqual([]);
  });

  it('a redirect within the server it was given is followed', async () => {
    const run = await runCli(['dns', '--url', within.origin, '--json', 'example.test', 'A'], {}, 30_000);
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as typeof DNS).answers[0]?.address).toBe('192.0.2.66');
    expect(within.asked).toEqual(['/v1/dns/resolve?name=example.test&type=A', '/moved/v1/dns/resolve?name=example.test&type=A']);
  });

  it('an /v1/ip answer without its network, location and connection ends in words with exit 1, not a TypeError', async () => {
    const run = await runCli(['ip', '--url', hollow.origin], {}, 30_000);
    expect([run.code, run.stderr]).toEqual([1, `netdiag: ${hollow.origin}/v1/ip answered data without the API's address, network, location and connection; is this a netdiag server?\n`]);
  });
});
