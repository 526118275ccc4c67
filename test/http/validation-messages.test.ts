// Which fault a 400 names when a request has several, and text that is not well-formed Unicode.
// The most specific comes first: a value that was sent and is wrong, before an undeclared field,
// before a field or parameter that is missing (`{"event":"bogus"}` was told "properties is
// required"; a DNS lookup with no parameters was told about `type` before the missing `name`).
// And a lone surrogate (JSON `"\ud800"`) in an event's free text was forwarded to the sink.
// Over real sockets, against the service with the log sink.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectContract } from '../support/contract.js';
import { send, type Reply } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/server.js';

const LIMITS = { NETDIAG_RATE_LIMITS: 'events=100000,dns=100000' };

interface Problem {
  code: string;
  detail: string;
}
const problemOf = (res: Reply) => res.body as Problem;

describe('POST /v1/events names the most specific fault', () => {
  let server: TestServer;
  const post = (body: string) => send(`${server.url}/v1/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  const analytics = () => server.logs().filter((l) => l.msg === 'analytics event').map((l) => l.analytics as Record<string, unknown>);
  beforeAll(async () => {
    server = await startTestServer({ ...LIMITS, NETDIAG_EVENTS_SINK: 'log' });
  });
  afterAll(async () => {
    await server.close();
  });

  it.each([
    ['an unknown event and nothing else', { event: 'bogus' }, 'event must be one of speed_test_started'],
    ['an unknown event, no properties', { event: 'bogus', event_id: randomUUID() }, 'event must be one of'],
    ['an event_id that is not a UUID, no properties', { event: 'speed_test_started', event_id: 'x' }, 'event_id must be a UUID'],
    ['a bad mode and no source', { event: 'speed_test_started', event_id: randomUUID(), properties: { mode: 'turbo' } }, 'properties.mode must be one of light, full'],
    ['a misspelt field (undeclared) and so a missing one', { evnt: 'speed_test_started', event_id: randomUUID(), properties: { source: 'web' } }, 'undeclared field "evnt"'],
    ['a wrong value beside an undeclared field', { event: 'bogus', event_id: randomUUID(), properties: { source: 'web' }, ip: '203.0.113.9' }, 'event must be one of'],
    ['only missing fields: the first in the document\'s order', {}, 'event is required'],
  ])('%s', async (_label, body, named) => {
    const res = await post(JSON.stringify(body));
    expect(res.status).toBe(400);
    expect(problemOf(res).code).toBe('invalid_event');
    expect(problemOf(res).detail).toContain(named);
    expectContract('POST', '/v1/events', res);
  });

  it('a lone surrogate in tool_version is 400 naming the field, and nothing reaches the sink', async () => {
    const eventId = randomUUID();
    // Written as the JSON escape: JSON.stringify of a lone surrogate writes the same text.
    const body = `{"event":"speed_test_started","event_id":"${eventId}","properties":{"source":"cli","tool_version":"1.0\\ud800"}}`;
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(problemOf(res)).toMatchObject({ code: 'invalid_event' });
    expect(problemOf(res).detail).toContain('properties.tool_version must be well-formed Unicode');
    expectContract('POST', '/v1/events', res);
    // A later valid event is logged; the refused one never was.
    const later = randomUUID();
    expect((await post(JSON.stringify({ event: 'speed_test_started', event_id: later, properties: { source: 'cli' } }))).status).toBe(202);
    expect(analytics().some((e) => e.event_id === later)).toBe(true);
    expect(analytics().some((e) => e.event_id === eventId)).toBe(false);
  });

  it.each([
    ['a lone low surrogate', '\\udc00x'],
    ['a high surrogate followed by no low one', '\\ud83d\\u0041'],
    ['two high surrogates', '\\ud83d\\ud83d'],
  ])('%s is refused as well', async (_label, escaped) => {
    const body = `{"event":"speed_test_started","event_id":"${randomUUID()}","properties":{"source":"cli","tool_version":"${escaped}"}}`;
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(problemOf(res).detail).toContain('properties.tool_version');
  });

  it('a lone surrogate is named before a missing field, after a wrong value', async () => {
    const missing = await post(`{"event":"speed_test_started","event_id":"${randomUUID()}","properties":{"tool_version":"\\ud800"}}`);
    expect(problemOf(missing).detail).toContain('properties.tool_version must be well-formed Unicode');
    const wrong = await post(`{"event":"bogus","event_id":"${randomUUID()}","properties":{"source":"cli","tool_version":"\\ud800"}}`);
    expect(problemOf(wrong).detail).toContain('event must be one of');
  });

  it('a surrogate pair (an emoji, escaped or as UTF-8) is well-formed text and accepted', async () => {
    const escaped = randomUUID();
    const raw = randomUUID();
    expect((await post(`{"event":"speed_test_started","event_id":"${escaped}","properties":{"source":"cli","tool_version":"1.0 \\ud83d\\ude80"}}`)).status).toBe(202);
    expect((await post(JSON.stringify({ event: 'speed_test_started', event_id: raw, properties: { source: 'cli', tool_version: '1.0 🚀' } }))).status).toBe(202);
    expect(analytics().find((e) => e.event_id === escaped)?.properties).toEqual({ source: 'cli', tool_version: '1.0 🚀' });
    expect(analytics().find((e) => e.event_id === raw)?.properties).toEqual({ source: 'cli', tool_version: '1.0 🚀' });
  });
});

describe('GET /v1/dns/resolve names the most specific fault', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(LIMITS);
  });
  afterAll(async () => {
    await server.close();
  });

  it.each([
    ['no parameters: name first', '', 'The query parameter "name" is required.'],
    ['only other parameters', 'foo=bar', 'The query parameter "name" is required.'],
    ['a type but no name', 'type=A', 'The query parameter "name" is required.'],
    ['a name but no type', 'name=example.com', 'The query parameter "type" is required.'],
    ['a bad type and no name: the bad value first', 'type=SOA', 'type must be one of A, AAAA, CNAME, MX, NS, TXT, PTR.'],
    ['a name too long and no type', `name=${'a'.repeat(254)}`, 'name must be 1 to 253 characters; got 254.'],
    ['an empty name and a bad type: the name first', 'name=&type=SOA', 'name must be 1 to 253 characters; got 0.'],
    ['a repeated type and no name', 'type=A&type=AAAA', 'The query parameter "type" must be given once.'],
  ])('%s', async (_label, query, detail) => {
    const res = await send(`${server.url}/v1/dns/resolve?${query}`);
    expect(res.status).toBe(400);
    expect(problemOf(res)).toMatchObject({ code: 'invalid_parameter', detail });
    expectContract('GET', '/v1/dns/resolve', res);
  });
});
