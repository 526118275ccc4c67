// `netdiag monitor` and a server that says "not now" (docs/monitor.md, "Checks and their figures"): a run the server's rate
// limit refused (the netdiag command's exit 4) is recorded as limited with its reason, in the log,
// `monitor history --json` and the page's /history.json, and is judged not at all: it counts in
// no streak, resets none and sends nothing; an alert after it counts and lists the runs that
// breached. And a reload (SIGHUP) keeps the slots of a check it does not change: nothing fires at
// once.
//
// The refusal comes from FAKE_LIMITED_API below: the real server's limits count in one-minute
// windows, so a refusal the command cannot wait out (a Retry-After past 60 s, src/cli/api/rate-limit.ts)
// is not something it gives on demand; the command's own handling of a real server's 429 is
// test/cli/rate-limit.test.ts's.
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runLinesOf, startMonitor, until } from '../support/monitor-process.js';
import { runCli } from '../support/process.js';
import { freePort } from '../support/wait.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';

const dir = mkdtempSync(join(tmpdir(), 'netdiag-monitor-limits-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A FAKE netdiag API: its nth request (from 1) answered as `answer(n)` says, 500 or 429 with a Retry-After of an hour. */
async function fakeLimitedApi(answer: (n: number) => 500 | 429): Promise<{ url: string; server: Server }> {
  let n = 0;
  const server = createServer((_req, res) => {
    const status = answer(++n);
    const headers = { 'Content-Type': 'application/problem+json', ...(status === 429 ? { 'Retry-After': '3600' } : {}) };
    res.writeHead(status, headers).end(JSON.stringify(status === 429 ? { title: 'Too many requests', status, detail: 'More than 30 dns requests from this source in one minute' } : { title: 'Internal error', status }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${String((server.address() as { port: number }).port)}`, server };
}

describe("netdiag monitor and a server's rate limit", () => {
  it('a limited run is recorded and shown as limited, with its reason once; it counts in no streak, resets none, alerts nothing', async () => {
    // A failed run, three refused by the rate limit, then failed runs again.
    const api = await fakeLimitedApi((n) => (n >= 2 && n <= 4 ? 429 : 500));
    const hook = await startWebhookReceiver();
    const { notices } = hook;
    const listen = await freePort();
    const config = join(dir, 'limited.yaml');
    writeFileSync(config, `servers: [${api.url}]\ndatabase: ${join(dir, 'limited.db')}\nlisten: 127.0.0.1:${String(listen)}\nchecks:\n  - name: answer\n    run: dns\n    query: example.test\n    cron: "* * * * * *"\n    spread: 0s\n    alert_after: 2\nnotify: ["${hook.url}"]\n`);
    const monitor = startMonitor(config);
    const runs = () => runLinesOf(monitor.lines, 'answer');
    let page: { checks: { streak: number; alerting: boolean }[]; runs: { outcome: string; ok: boolean; error: string | null; breaches: string[] }[] };
    try {
      await until('a failed run and three limited ones', () => runs().length >= 4, 20_000, monitor.lines);
      page = (await (await fetch(`http://127.0.0.1:${String(listen)}/history.json`)).json()) as typeof page;
      // Had a limited run counted, the streak would be 4 and an alert out; had it reset, 0.
      expect(notices).toEqual([]);
      expect(page.checks).toEqual([expect.objectContaining({ streak: 1, alerting: false })]);
      await until('the alert at the next failed run', () => notices.length >= 1, 20_000, monitor.lines);
    } finally {
      monitor.child.kill('SIGTERM');
      await once(monitor.child, 'exit');
      hook.close();
      api.server.close();
    }
    const reason = 'Too many requests: More than 30 dns requests from this source in one minute (not waited: it asks to wait 3600 s; try again then)';
    const [failed, ...limited] = runs().slice(0, 4);
    expect(failed).toMatch(/: failed: .*; breach 1 in a row$/);
    expect(limited).toEqual(Array.from({ length: 3 }, () => `netdiag monitor: answer on ${api.url}: limited: ${reason}; counted in no streak`));
    // The page's data: the reason once, in error; a limited run breached nothing.
    expect(page.runs.slice(0, 4).map((r) => [r.outcome, r.ok, r.breaches])).toEqual([
      ['failed', false, ['the check did not run']],
      ['limited', false, []],
      ['limited', false, []],
      ['limited', false, []],
    ]);
    expect(page.runs[1]?.error).toBe(reason);
    // The alert counts the two failed runs and lists those two, not the limited ones between.
    const [alert] = notices;
    expect(alert?.title).toBe(`netdiag monitor: answer on ${api.url}: 2 breaches in a row`);
    expect(alert?.body.split('\n')).toEqual(Array.from({ length: 2 }, (): unknown => expect.stringMatching(/^- \S+Z: the check did not run: `Internal error/)));
    const history = await runCli(['monitor', 'history', '--json', '--config', config]);
    expect((JSON.parse(history.stdout) as { outcome: string }[]).slice(0, 5).map((r) => r.outcome)).toEqual(['failed', 'limited', 'limited', 'limited', 'failed']);
  }, 60_000);

  it('a reload keeps the slots of a check it leaves as it was: its next run comes at its slot, not at once', async () => {
    const file = join(dir, 'reload.yaml');
    // Nothing listens on the server's port: each run fails at once. A 30 s interval with a spread of
    // 10 s: a plan made afresh at the reload would run the check within 10 s of it.
    const port = await freePort();
    const configOf = (alertAfter: number) => `servers: [http://127.0.0.1:${String(port)}]\ndatabase: ${join(dir, 'reload.db')}\nlisten: off\nchecks:\n  - name: steady\n    run: rpm\n    every: 30s\n    spread: 10s\n    alert_after: ${String(alertAfter)}\n`;
    writeFileSync(file, configOf(1000));
    const monitor = startMonitor(file);
    const runs = () => runLinesOf(monitor.lines, 'steady').length;
    try {
      // The first run comes within the spread of the start, or at the first slot (an offset of 0).
      await until('the first run', () => runs() >= 1, 45_000, monitor.lines);
      const first = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      // A setting outside the schedule changed: the check is the same one, on the same plan.
      writeFileSync(file, configOf(999));
      monitor.child.kill('SIGHUP');
      await until('the reload', () => monitor.lines.some((l) => l.endsWith('is read again')), 10_000, monitor.lines);
      await until('the next run', () => runs() >= 2, 45_000, monitor.lines);
      // Its slot, 30 s after the first run's, less what the two runs' lengths may differ by.
      expect(Date.now() - first).toBeGreaterThan(28_000);
    } finally {
      monitor.child.kill('SIGTERM');
      await once(monitor.child, 'exit');
    }
  }, 120_000);
});
