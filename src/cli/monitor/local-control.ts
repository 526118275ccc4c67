// Pause and resume on the monitor's listener (docs/monitor.md, "Pausing"). The listener has no
// login: these checks keep other web sites' pages out, not people. `netdiag monitor pause` shows the
// token the monitor keeps in a file only the user reads (control-token.ts); the local page shows a
// CSRF token it read from this origin (GET /control.json: another origin's page cannot read that
// answer, CORS being absent) and its request must come from this origin (Origin, Sec-Fetch-Site:
// Fetch Metadata). A JSON body is required too: a form or a no-cors fetch cannot send one. Any
// client that reaches the port (curl by a local user too) can read /control.json and send those
// headers itself, so it can pause and resume.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { durationMs } from './monitor-config.js';
import { sameToken } from './control-token.js';
import { MAX_PAUSE_MS, pauseEndText, pausedUntil, pauseUntil, resume } from './gates/pause.js';
import type { Store } from './store.js';

/** The most a control's body may hold: `{"for":"2h"}` is a dozen bytes. */
const MAX_BODY = 1024;

export interface ControlSources {
  store: () => Store;
  log: (line: string) => void;
  /** The token of `netdiag monitor pause` (control-token.ts). */
  token: string;
}

type Send = (res: ServerResponse, status: number, type: string, body: string, extra?: Record<string, string>) => void;

/** A refusal or a result, as JSON with what it means. */
type Answer = { status: number; body: Record<string, unknown>; extra?: Record<string, string> };

/** The page's CSRF token: one per start of the monitor, given to this origin's page only. */
export const csrfToken = (): string => randomBytes(32).toString('base64url');

const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

/** Who the request proves it is: the command line (the token), the page (its CSRF token from this origin), or why neither. */
function caller(req: IncomingMessage, sources: ControlSources, csrf: string): 'command' | 'page' | Answer {
  const bearer = /^Bearer (\S+)$/.exec(header(req, 'authorization') ?? '')?.[1];
  if (bearer !== undefined) return sameToken(bearer, sources.token) ? 'command' : { status: 403, body: { error: "the token is not this monitor's (netdiag monitor pause reads it from beside the history)" } };
  const origin = header(req, 'origin');
  const site = header(req, 'sec-fetch-site');
  // The page's own requests name this origin; a browser sends Origin on every POST (Fetch, "origin header").
  // Sec-Fetch-Site is checked only when sent: browsers send it to potentially trustworthy URLs alone
  // (Fetch Metadata, "Sec-Fetch-Site"), which a plain-http LAN address is not.
  if (origin === undefined || origin !== `http://${header(req, 'host') ?? ''}` || (site !== undefined && site !== 'same-origin')) return { status: 403, body: { error: "a control request must come from the monitor's own page (Origin, Sec-Fetch-Site) or carry its token" } };
  const given = header(req, 'x-csrf-token');
  if (given === undefined) return { status: 401, body: { error: 'a control request needs the CSRF token of GET /control.json (X-CSRF-Token)' } };
  return sameToken(given, csrf) ? 'page' : { status: 403, body: { error: 'the CSRF token is not the current one: load the page again' } };
}

/** The request's JSON body (an object), or the answer refusing it. */
async function jsonBody(req: IncomingMessage): Promise<{ json: Record<string, unknown> } | Answer> {
  if (!/^application\/json\s*(;|$)/i.test(header(req, 'content-type') ?? '')) return { status: 415, body: { error: 'a control request is JSON (Content-Type: application/json)' } };
  let text = '';
  for await (const chunk of req as AsyncIterable<Buffer>) {
    text += chunk.toString('utf8');
    if (text.length > MAX_BODY) return { status: 413, body: { error: `a control request is at most ${String(MAX_BODY)} bytes` } };
  }
  try {
    const body: unknown = JSON.parse(text === '' ? '{}' : text);
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) return { json: body as Record<string, unknown> };
  } catch {
    // Said below, as a body that is no object.
  }
  return { status: 400, body: { error: 'the body is not a JSON object' } };
}

/** What /control.json and each control answer: whether the monitor is paused, and until when. */
function pauseState(store: Store): Record<string, unknown> {
  const until = pausedUntil(store, Date.now());
  return { paused: until !== undefined, paused_until: until === undefined ? null : pauseEndText(until) };
}

/** `{"for": "2h"}`: the pause's length, or the answer refusing it. */
function pauseLength(body: Record<string, unknown>): number | Answer {
  const text = body.for;
  const ms = typeof text === 'string' ? durationMs(text) : undefined;
  if (ms === undefined || ms <= 0 || ms > MAX_PAUSE_MS) return { status: 400, body: { error: `"for" is a duration from 1s to 30d (90s, 30m, 2h, 7d); it was ${JSON.stringify(text ?? null)}` } };
  return ms;
}

/** A control request whose caller is proved: pause or resume, said in the log. */
async function control(req: IncomingMessage, action: 'pause' | 'resume', who: 'command' | 'page', sources: ControlSources): Promise<Answer> {
  const body = await jsonBody(req);
  if (!('json' in body)) return body;
  const store = sources.store();
  const by = who === 'command' ? 'netdiag monitor' : 'the local page';
  if (action === 'resume') {
    const was = pausedUntil(store, Date.now());
    resume(store);
    if (was !== undefined) sources.log(`resumed by ${by}: the checks run at their next slots`);
    return { status: 200, body: pauseState(store) };
  }
  const ms = pauseLength(body.json);
  if (typeof ms !== 'number') return ms;
  const until = pauseUntil(store, Date.now() + ms);
  sources.log(`paused by ${by} until ${pauseEndText(until)}: each slot until then is recorded as skipped`);
  return { status: 200, body: pauseState(store) };
}

/**
 * Answers /control.json and the POSTs /control/pause and /control/resume; false for any other
 * path (the listener answers it). The Host rule (local-server.ts) has been applied already.
 */
export async function answerControl(req: IncomingMessage, res: ServerResponse, path: string, sources: ControlSources, csrf: string, send: Send): Promise<boolean> {
  const reply = (a: Answer) => {
    send(res, a.status, 'application/json; charset=utf-8', JSON.stringify(a.body), a.extra);
  };
  const action = path === '/control/pause' ? 'pause' : path === '/control/resume' ? 'resume' : undefined;
  if (path === '/control.json') {
    if (req.method !== 'GET' && req.method !== 'HEAD') reply({ status: 405, body: { error: '/control.json is read with GET' }, extra: { Allow: 'GET, HEAD' } });
    // Another origin's page cannot read this answer (no CORS): only this origin's page learns the CSRF token.
    else reply({ status: 200, body: { ...pauseState(sources.store()), csrf } });
    return true;
  }
  if (action === undefined) return false;
  if (req.method !== 'POST') {
    reply({ status: 405, body: { error: `${path} takes POST` }, extra: { Allow: 'POST' } });
    return true;
  }
  const who = caller(req, sources, csrf);
  reply(typeof who === 'string' ? await control(req, action, who, sources) : who);
  return true;
}
