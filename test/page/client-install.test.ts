// The command-line client from the server you are on (issue 51): the server serves the
// `pack:client` tarball at /client/netdiag-client.tgz, the page prints the one command that
// installs it from there, and that command, run as printed in an empty folder with npm able to
// reach nothing but this server (its registry pointed at a closed port), installs a `netdiag`
// whose `ip --url` answers with this server's view. A server with no package (Workers, a build
// that packed none) answers 404 with a problem that says so, and its page prints no command.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app/app.js';
import { runProcess } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { loopback, testServices } from '../support/services.js';
import { requireCommands } from '../support/system.js';

const run = promisify(execFile);
const ready = requireCommands('client install from the page', ['chromium', 'npm'], 'chromium npm');

describe.skipIf(!ready)('the client, installed from the server by the command its page prints', () => {
  let server: TestServer;
  let browser: Browser;
  let dir: string;

  beforeAll(async () => {
    server = await startTestServer();
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
    dir = mkdtempSync(join(tmpdir(), 'netdiag-install-from-page-'));
  }, 60_000);
  afterAll(async () => {
    await browser.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the page prints one command; run in an empty folder it installs netdiag from this server, and `netdiag ip --url` runs', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/`);
    await page.waitForSelector('#client-install:not([hidden])');
    const command = ((await page.textContent('#client-install code')) ?? '').trim();
    await page.close();
    // One command, naming this server's URL (nothing a registry would be asked for).
    expect(command).toMatch(new RegExp(`^npm install -g ${server.url.replace(/[.:/]/g, '\\$&')}/\\S+\\.tgz$`));

    // npm's own settings from the environment (an `npm test` run sets some) are left out; its
    // prefix (where -g installs) and cache are the empty folder's, its registry a closed port.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith('npm_')));
    const prefix = join(dir, 'prefix');
    const npmEnv = { ...env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`, npm_config_prefix: prefix, npm_config_cache: join(dir, 'cache'), npm_config_registry: 'http://127.0.0.1:9/', npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' };
    await run('sh', ['-c', command], { cwd: dir, env: npmEnv, timeout: 120_000 });

    const ip = await runProcess(join(prefix, 'bin', 'netdiag'), ['ip', '--json', '--url', server.url], { PATH: npmEnv.PATH }, 30_000);
    expect(ip.code).toBe(0);
    expect((JSON.parse(ip.stdout) as { address: string }).address).toBe('127.0.0.1');
  }, 180_000);

  it('the package is served as a file: application/gzip, a name with the version, an ETag a client revalidates with (304)', async () => {
    const res = await fetch(`${server.url}/client/netdiag-client.tgz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/gzip');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="netdiag-client-[0-9]+\.[0-9]+\.[0-9]+\.tgz"$/);
    const bytes = new Uint8Array(await res.arrayBuffer());
    // A gzip stream (RFC 1952 §2.3.1: ID1 ID2), sent as the file, not coded again.
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
    expect(res.headers.get('content-encoding')).toBeNull();
    const again = await fetch(`${server.url}/client/netdiag-client.tgz`, { headers: { 'If-None-Match': res.headers.get('etag') ?? '' } });
    expect(again.status).toBe(304);
  });
});

describe('a server with no client package', () => {
  it('answers 404 with a problem that says why, and its page offers no install command', async () => {
    const app = createApp(testServices());
    const res = await app.fetch(new Request('http://api.test/client/netdiag-client.tgz'), loopback);
    expect(res.status).toBe(404);
    const problem = (await res.json()) as { code: string; detail: string };
    expect(problem.code).toBe('not_found');
    expect(problem.detail).toMatch(/^This server has no client package to serve/);
    const page = await app.fetch(new Request('http://api.test/', { headers: { Accept: 'text/html' } }), loopback);
    expect(await page.text()).not.toContain('data-client-package');
  });
});
