// What a domain owner or a deployment chose, printed by `netdiag` to a real terminal (util-linux
// `script` gives the command a pseudo-terminal): Knot serves a TXT record and a CNAME target
// holding terminal controls (test/fixtures/dns/hostile.test.zone) through the real server; a fake
// deployment (test/support/hostile-deployment.ts) stands in for a malicious one for problem
// texts, /v1/ip, latency and watch. No control byte may reach the terminal but the line ends;
// the escaped form is printed instead, and --json parses back to the exact strings.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE_SHOWN, HOSTILE_TEXT, startHostileDeployment, type HostileDeployment } from '../support/hostile-deployment.js';
import { startKnot, type Knot } from '../support/knot.js';
import { CLI, runCli } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const ready = requireCommands('netdiag on a terminal, given hostile text', ['knotd', 'script'], 'knot bsdutils');

/** The TXT record's text, as Knot serves it (the zone writes the same characters as \DDD). */
const TXT = HOSTILE_TEXT;
/** The CNAME's target as the API presents it: RFC 1035 escapes for ESC, BEL and CR. */
const TARGET = 'x\\027\\007\\013y.hostile.test';

/** Runs `netdiag <args>` on a pseudo-terminal and returns the bytes the terminal received (stdout and stderr). */
async function terminalBytes(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; bytes: Buffer }> {
  const command = [process.execPath, CLI, ...args].map((a) => `'${a}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], { env: { PATH: process.env.PATH ?? '', TERM: 'xterm', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => chunks.push(d));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, bytes: Buffer.concat(chunks) };
}

/**
 * The control and format characters in what a terminal received, as code points, besides the
 * terminal's own line ends (the pseudo-terminal turns each LF into CR LF) and, when `sgr`, the
 * CLI's own bold, dim and reset. Bytes that are no UTF-8 (a lone 0x9B is CSI to some terminals) fail the decoding.
 */
function controls(bytes: Buffer, sgr = false): string[] {
  let text = new TextDecoder('utf-8', { fatal: true }).decode(bytes).replaceAll('\r\n', '\n');
  if (sgr) text = text.replaceAll('\u001b[0m', '').replaceAll('\u001b[1m', '').replaceAll('\u001b[2m', '');
  return [...text.matchAll(/[^\P{C}\n]|[\p{Zl}\p{Zp}]/gu)].map(([c]) => `U+${(c.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`);
}

describe.skipIf(!ready)('netdiag prints what servers chose with its controls escaped', () => {
  let knot: Knot;
  let server: TestServer;
  let hostile: HostileDeployment;

  beforeAll(async () => {
    knot = await startKnot();
    server = await startTestServer({ NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(knot.port)}` });
    hostile = await startHostileDeployment();
  }, 30_000);

  afterAll(async () => {
    await hostile.close();
    await server.close();
    await knot.close();
  });

  it('dns TXT from Knot: \\027[2K, \\013, OSC 52 and the rest printed escaped, no control byte on the terminal', async () => {
    const plain = await terminalBytes(['dns', '--url', server.url, 'txt.hostile.test', 'TXT'], { NO_COLOR: '1' });
    expect(plain.code).toBe(0);
    expect(controls(plain.bytes)).toEqual([]);
    expect(plain.bytes.toString()).toContain(`txt.hostile.test  TXT   300  ${HOSTILE_SHOWN}\r\n`);
    // With colour, the only escape sequences are the CLI's own bold and reset around the header.
    const coloured = await terminalBytes(['dns', '--url', server.url, 'txt.hostile.test', 'TXT']);
    expect(coloured.bytes.toString()).toContain('\u001b[1m');
    expect(controls(coloured.bytes, true)).toEqual([]);
  });

  it('dns CNAME from Knot: the target\'s ESC, BEL and CR come as RFC 1035 escapes from the API and are printed as dig prints them', async () => {
    const run = await terminalBytes(['dns', '--url', server.url, 'trap.hostile.test', 'CNAME'], { NO_COLOR: '1' });
    expect(run.code).toBe(0);
    expect(controls(run.bytes)).toEqual([]);
    expect(run.bytes.toString()).toContain(`trap.hostile.test  CNAME  300  ${TARGET}\r\n`);
  });

  it('the API gives the CNAME target in RFC 1035 presentation form, and the TXT value as its text', async () => {
    const res = await fetch(`${server.url}/v1/dns/resolve?name=trap.hostile.test&type=CNAME`);
    const body = await res.text();
    expect(res.status).toBe(200);
    expect((JSON.parse(body) as { data: { answers: unknown[] } }).data.answers).toEqual([{ type: 'CNAME', name: 'trap.hostile.test', ttl_seconds: 300, target: TARGET }]);
    const txt = (await (await fetch(`${server.url}/v1/dns/resolve?name=txt.hostile.test&type=TXT`)).json()) as { data: { answers: { value: string }[] } };
    expect(txt.data.answers.map((a) => a.value)).toEqual([TXT]);
  });

  it('dns --json: the exact strings, with no raw C1 or format character in the JSON text', async () => {
    const txt = await runCli(['dns', '--json', '--url', server.url, 'txt.hostile.test', 'TXT']);
    expect(txt.code).toBe(0);
    expect((JSON.parse(txt.stdout) as { answers: { value: string }[] }).answers.map((a) => a.value)).toEqual([TXT]);
    expect(controls(Buffer.from(txt.stdout))).toEqual([]);
    const cname = await runCli(['dns', '--json', '--url', server.url, 'trap.hostile.test', 'CNAME']);
    expect((JSON.parse(cname.stdout) as { answers: { target: string }[] }).answers.map((a) => a.target)).toEqual([TARGET]);
  });

  it('a deployment\'s problem title and detail are escaped on the terminal', async () => {
    const run = await terminalBytes(['dns', '--url', hostile.url, 'www.example.test']);
    expect(run.code).toBe(1);
    expect(controls(run.bytes)).toEqual([]);
    expect(run.bytes.toString()).toBe(`netdiag: ${HOSTILE_SHOWN}: ${HOSTILE_SHOWN}\r\n`);
  });

  it('ip: the reverse name, network and location a deployment sends are escaped', async () => {
    const run = await terminalBytes(['ip', '--url', hostile.url], { NO_COLOR: '1' });
    expect(run.code).toBe(0);
    expect(controls(run.bytes)).toEqual([]);
    const text = run.bytes.toString();
    expect(text).toContain(`reverse name  ${HOSTILE_SHOWN}\r\n`);
    expect(text).toContain(`network       AS64500, ${HOSTILE_SHOWN}\r\n`);
    expect(text).toContain(`location      ${HOSTILE_SHOWN}\r\n`);
    const json = await runCli(['ip', '--json', '--url', hostile.url]);
    expect((JSON.parse(json.stdout) as { reverse_hostname: string }).reverse_hostname).toBe(HOSTILE_TEXT);
  });

  it('latency: a region\'s name a deployment sends is escaped', async () => {
    const run = await terminalBytes(['latency', 'weur', '--url', hostile.url], { NO_COLOR: '1' });
    expect(run.code).toBe(0);
    expect(controls(run.bytes)).toEqual([]);
    expect(run.bytes.toString()).toMatch(new RegExp(`\\nweur +${HOSTILE_SHOWN.replace(/[\\[\]().*+?^$|]/g, '\\$&')} +[\\d.]+ ms +12\\.5 ms +[\\d.]+ ms\\r\\n`));
  });

  it('watch: a failed poll\'s problem text stays exact in the JSON lines, with no raw C1 or format character', async () => {
    const run = await runCli(['watch', '--url', hostile.url, '--count', '1', '--interval', '1', 'eeur']);
    expect(run.code).toBe(0);
    expect(controls(Buffer.from(run.stdout))).toEqual([]);
    const lines = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { target: string; status: string; error?: string });
    expect(lines.find((l) => l.target === 'eeur')).toMatchObject({ status: 'failed', error: `${HOSTILE_TEXT}: ${HOSTILE_TEXT}` });
  });
});
