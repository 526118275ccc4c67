// The InfluxDB outlet's 2.x request (docs/monitor.md, "InfluxDB"): read from `influxdb:` with org,
// bucket and token, each batch a POST to /api/v2/write?org=&bucket=&precision=ms with
// `Authorization: Token …` and the points as the body; a refused token keeps the runs (tried again).
// Against a FAKE 2.x endpoint (test/support/fake-influxdb-v2.ts): Debian's influxd is 1.x.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMonitorConfig } from '../../src/cli/monitor/monitor-config.js';
import { influxdbOutlet } from '../../src/cli/monitor/outlets/influxdb.js';
import type { NumberedRun } from '../../src/cli/monitor/store.js';
import { startFakeInfluxdbV2, type FakeInfluxdbV2 } from '../support/fake-influxdb-v2.js';

const TOKEN = 'v2-token-secret';

describe('the InfluxDB outlet, 2.x', () => {
  let fake: FakeInfluxdbV2;
  beforeAll(async () => {
    fake = await startFakeInfluxdbV2(TOKEN);
  });
  afterAll(async () => {
    await fake.close();
  });

  const settingsFor = (token: string) => {
    const text = `servers: [https://netdiag.example]\nchecks:\n  - name: x\n    run: rpm\n    every: 1h\ninfluxdb:\n  url: ${fake.url}/\n  org: home lab\n  bucket: net&diag\n  token: ${token}\n`;
    const settings = parseMonitorConfig(text, 'monitor.yaml', '/data/monitor.db').influxdb;
    if (settings === null) throw new Error('no influxdb settings read');
    return settings;
  };
  const run: NumberedRun = { id: 1, check: 'round trip, home', server: 'https://netdiag.example', startedAt: Date.UTC(2026, 11, 1, 12, 0, 0), durationMs: 12, ok: true, error: null, figures: { client_to_api_rtt_ms: 4.5 }, breaches: [], sourceAddress: '192.0.2.7' };

  it('POSTs the points to /api/v2/write with the org, the bucket, ms precision and the token', async () => {
    fake.writes.length = 0;
    await influxdbOutlet(settingsFor(TOKEN), () => undefined).deliver([run]);
    expect(fake.writes).toHaveLength(1);
    const [write] = fake.writes;
    expect(write?.method).toBe('POST');
    expect(write?.path).toBe('/api/v2/write');
    expect(Object.fromEntries(write?.query ?? [])).toEqual({ org: 'home lab', bucket: 'net&diag', precision: 'ms' });
    expect(write?.headers.authorization).toBe(`Token ${TOKEN}`);
    expect(write?.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(write?.body).toBe('netdiag_monitor,check=round\\ trip\\,\\ home,outcome=ok,server=https://netdiag.example,source=192.0.2.7 client_to_api_rtt_ms=4.5,duration_ms=12i 1796126400000\n');
  });

  it('keeps the runs when the token is refused (401): the delivery fails with the reason, the token not in it', async () => {
    const lines: string[] = [];
    const failed = influxdbOutlet(settingsFor('wrong-token'), (l) => lines.push(l)).deliver([run]);
    await expect(failed).rejects.toThrow(/^401 Unauthorized: unauthorized access$/);
    expect(lines).toEqual([]);
  });
});
