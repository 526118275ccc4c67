// The command line against a deployment that sends too much (issue 50): a FAKE server
// (test/support/oversized-deployment.ts) with endless bodies and a 2 GB speed-test plan. Each
// command ends with exit 1 and a message saying what was too large, in bounded memory: the CLI
// runs with a 96 MiB heap, which reading an endless body whole exhausts in a second (V8 then
// aborts, exit 134), and the 2 GB upload buffer is refused before it is allocated.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BYTES_PER_REQUEST } from '../../src/features/speedtest/configuration.js';
import { MAX_TRANSFER_BYTES } from '../../src/cli/speedtest/plan.js';
import { HUGE_BYTES, startOversizedDeployment, type OversizedDeployment } from '../support/oversized-deployment.js';
import { runCli } from '../support/process.js';

const SMALL_HEAP = { NODE_OPTIONS: '--max-old-space-size=96' };

describe('the command line bounds what a server sends it', () => {
  let server: OversizedDeployment;
  beforeAll(async () => {
    server = await startOversizedDeployment();
  });
  afterAll(async () => {
    await server.close();
  });

  it('an endless API answer ends `netdiag ip` with exit 1 saying so, not a crash', async () => {
    const run = await runCli(['ip', '--url', server.url], SMALL_HEAP, 30_000);
    expect([run.code, run.stderr]).toEqual([1, `netdiag: ${server.url}/v1/ip answered more than 1048576 bytes, far more than any answer of the API; is this a netdiag server?\n`]);
  });

  it('an endless responsiveness configuration ends `netdiag rpm --config` with exit 1 saying so', async () => {
    const run = await runCli(['rpm', '--config', `${server.url}/.well-known/nq`], SMALL_HEAP, 30_000);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`the configuration ${server.url}/.well-known/nq is more than 65536 bytes, more than a configuration holds`);
  });

  it('a plan asking for 2 GB a request is refused before anything is sent, naming the field', async () => {
    const run = await runCli(['speedtest', '--url', server.url, '--no-analytics'], SMALL_HEAP, 30_000);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`asks for modes[full].measurements[1].bytes_per_request ${String(HUGE_BYTES)}, more than ${String(MAX_TRANSFER_BYTES)}`);
  });

  it("the client's bound is netdiag's own largest transfer", () => {
    expect(MAX_TRANSFER_BYTES).toBe(MAX_BYTES_PER_REQUEST);
  });
});
