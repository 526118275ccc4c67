// Problem types that lead somewhere, in workerd: the Worker serves the same
// `/problems/<code>` documentation from the one catalogue, and the `type` of its own problems
// dereferences there. What each form holds is tested over sockets on Node (test/http/problem-pages.test.ts).
import { describe, expect, it } from 'vitest';
import { PROBLEMS, type ProblemCode } from '../../src/core/http/problems.js';
import { expectContract } from '../support/contract.js';
import { codeOf, workerWith, type Reply } from './worker.js';

const worker = workerWith();
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const CODES = Object.keys(PROBLEMS) as ProblemCode[];

/** The worker's requests are made to https://netdiag.test: a type URI there is a path of this Worker. */
function pathOf(type: string): string {
  const url = new URL(type);
  expect(url.origin).toBe('https://netdiag.test');
  return url.pathname;
}

async function expectDocumented(type: string, code: ProblemCode): Promise<void> {
  const res = await worker.send(pathOf(type), { headers: { Accept: '*/*' } });
  expect(res.status).toBe(200);
  expect(res.text.split('\n')[0]).toBe(`${PROBLEMS[code].title} (${String(PROBLEMS[code].status)}, ${code})`);
}

describe('problem documentation in workerd', () => {
  it.each(CODES)('/problems/%s is text for curl-like clients and a page for a browser', async (code) => {
    const text = await worker.send(`/problems/${code}`, { headers: { Accept: '*/*' } });
    expect(text.status).toBe(200);
    expectContract('GET', '/problems/{code}', text);
    expect(text.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(text.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(text.headers.get('ratelimit-limit')).toBeNull();
    const html = await worker.send(`/problems/${code}`, { headers: { Accept: BROWSER_ACCEPT } });
    expect(html.status).toBe(200);
    expectContract('GET', '/problems/{code}', html);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
    expect(html.text).toContain(`<h1>${PROBLEMS[code].title}</h1>`);
  });

  it('an unknown code is a 404 problem, or a 404 page for a browser', async () => {
    const res = await worker.send('/problems/no_such_code');
    expect(res.status).toBe(404);
    expect(codeOf(res)).toBe('not_found');
    expectContract('GET', '/problems/{code}', res);
    const page = await worker.send('/problems/no_such_code', { headers: { Accept: BROWSER_ACCEPT } });
    expect(page.status).toBe(404);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<h1>Not found</h1>');
  });

  it('HEAD answers the headers of GET with no body', async () => {
    const get = await worker.send('/problems/upstream_timeout');
    const head = await worker.send('/problems/upstream_timeout', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('content-length')).toBe(String(new TextEncoder().encode(get.text).length));
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
  });

  it('the type of the Worker\'s own problems dereferences to their documentation', async () => {
    const failures: [ProblemCode, Promise<Reply>][] = [
      ['not_found', worker.send('/v2/nothing')],
      ['method_not_allowed', worker.send('/v1/health', { method: 'DELETE' })],
      ['unknown_region', worker.send('/v1/latency/regions/mars/probe', { caller: '198.51.100.30' })],
      ['invalid_parameter', worker.send('/v1/dns/resolve?name=example.com', { caller: '198.51.100.30' })],
      ['unsupported_media_type', worker.send('/v1/events', { method: 'POST', caller: '198.51.100.30', body: '{}', headers: { 'Content-Type': 'text/plain' } })],
    ];
    for (const [code, pending] of failures) {
      const res = await pending;
      expect(codeOf(res), res.text).toBe(code);
      await expectDocumented((res.body as { type: string }).type, code);
    }
  });

  it('the type of a misconfigured Worker\'s 500 leads to internal_error\'s documentation', async () => {
    const original = console.error;
    // The configuration error is logged naming the variable; not this test's subject.
    console.error = () => undefined;
    let res: Reply;
    try {
      res = await workerWith({ NETDIAG_LIMITER: 'redis' }).send('/v1/health');
    } finally {
      console.error = original;
    }
    expect(codeOf(res)).toBe('internal_error');
    // That deployment answers nothing but 500s; the same origin well configured serves the page.
    await expectDocumented((res.body as { type: string }).type, 'internal_error');
  });
});
