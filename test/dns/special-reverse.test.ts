// Issue 69, item 3: /v1/dns/resolve reads no special-use address's reverse zone, however the
// question is spelt (a PTR of the address in each form the route accepts, or any type of a name
// under its reverse zone), unless the operator allows it with the switch `?ip=` has; Knot holds a
// private zone (test/fixtures/dns/10.in-addr.arpa.zone) and counts every query that reaches it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../support/http.js';
import { startKnot, type Knot } from '../support/knot.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const available = requireCommands('special-use reverse zones', ['knotd', 'knotc'], 'knot');

interface Answered {
  status: number;
  body: { code?: string; detail?: string; data?: { answers: { target?: string; value?: string }[] } };
}

describe.skipIf(!available)('special-use reverse zones through /v1/dns/resolve', () => {
  let knot: Knot;
  let closed: TestServer;
  let open: TestServer;

  beforeAll(async () => {
    knot = await startKnot();
    const upstream = { NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(knot.port)}`, NETDIAG_RATE_LIMITS: 'dns=100000' };
    closed = await startTestServer(upstream);
    open = await startTestServer({ ...upstream, NETDIAG_IP_PARAM_SPECIAL_PTR: 'on' });
  });
  afterAll(async () => {
    await closed.close();
    await open.close();
    await knot.close();
  });

  const ask = async (server: TestServer, name: string, type: string): Promise<Answered> => {
    const res = await send(`${server.url}/v1/dns/resolve?${new URLSearchParams({ name, type }).toString()}`);
    return { status: res.status, body: res.body as Answered['body'] };
  };

  /** Every spelling of a question about a special-use address's reverse zone, with the type it is asked as. */
  const SPELLINGS: [string, string][] = [
    ['10.0.0.5', 'PTR'],
    ['::ffff:10.0.0.5', 'PTR'],
    ['::ffff:a00:5', 'PTR'],
    ['0:0:0:0:0:FFFF:0A00:0005', 'PTR'],
    ['5.0.0.10.in-addr.arpa', 'TXT'],
    ['5.0.0.10.IN-ADDR.ARPA.', 'NS'],
    ['5.0.0.10.in-addr.arpa', 'CNAME'],
    ['x.0.0.10.in-addr.arpa', 'A'],
    ['10.in-addr.arpa', 'NS'],
    ['5.0/25.0.0.10.in-addr.arpa', 'PTR'],
    ['127.0.0.1', 'PTR'],
    ['192.168.1.1', 'PTR'],
    ['fd00::1', 'PTR'],
    ['fe80::1', 'PTR'],
    ['2001:db8::10', 'PTR'],
    ['0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa', 'TXT'],
    ['d.f.ip6.arpa', 'NS'],
  ];

  it('refuses every spelling with a 400 that says why, and asks the resolver nothing', async () => {
    const before = knot.queries();
    for (const [name, type] of SPELLINGS) {
      const { status, body } = await ask(closed, name, type);
      expect({ name, type, status, code: body.code }).toEqual({ name, type, status: 400, code: 'invalid_parameter' });
      // A PTR name that is not an address stays that fault; every other names the special use.
      if (!name.includes('/')) expect(body.detail, `${name} ${type}`).toMatch(/special-use|reverse zone of/);
    }
    expect(knot.queries()).toBe(before);
  });

  it('the private zone: 400 saying it is private-use, and once the operator allows it, its answer', async () => {
    const refused = await ask(closed, '10.0.0.5', 'PTR');
    expect(refused.body.detail).toBe(
      '10.0.0.5 is a private-use (RFC 1918) address: this server does not ask its resolver about special-use addresses, whose reverse zones belong to the networks that use them (RFC 6303). The operator can allow it with NETDIAG_IP_PARAM_SPECIAL_PTR.',
    );
    expect((await ask(closed, '5.0.0.10.in-addr.arpa', 'TXT')).body.detail).toMatch(/^5\.0\.0\.10\.in-addr\.arpa lies in the reverse zone of private-use \(RFC 1918\) addresses: /);
    const allowed = await ask(open, '10.0.0.5', 'PTR');
    expect(allowed.status).toBe(200);
    expect(allowed.body.data?.answers.map((a) => a.target)).toEqual(['laptop-42.office.example']);
    expect((await ask(open, '5.0.0.10.in-addr.arpa', 'TXT')).body.data?.answers.map((a) => a.value)).toEqual(['printer room']);
  });

  it('asks about a public address, and a zone that only contains special-use space', async () => {
    const before = knot.queries();
    const google = await ask(closed, '8.8.8.8', 'PTR');
    expect(google.body.data?.answers.map((a) => a.target)).toEqual(['dns.google']);
    // 192.0.0.0/8 holds 192.168.0.0/16 but is not special-use itself: asked (Knot has no such zone).
    expect((await ask(closed, '192.in-addr.arpa', 'NS')).status).toBe(200);
    expect((await ask(closed, 'in-addr.arpa', 'NS')).status).toBe(200);
    expect(knot.queries() - before).toBe(3);
  });
});
