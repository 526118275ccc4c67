// A production install runs on the machine's own Node. Started on one older than the 22.12 netdiag
// is built and tested on (CI's system Node 20), `netdiag serve` says so in its log and serves.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeIsSupported } from '../../src/runtime/node/adapter/serve.js';
import { CLI } from '../support/process.js';

/** The first Node on PATH older than 22.12 (the system's, when npm scripts bring their own 22). */
function olderNode(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const path = join(dir, 'node');
    if (!existsSync(path)) continue;
    const version = spawnSync(path, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    if (version !== '' && !nodeIsSupported(version)) return path;
  }
  return undefined;
}

const older = olderNode();
if (older === undefined) {
  if (process.env.CI === 'true') throw new Error('node version warning: no Node older than 22.12 on PATH; CI requires one (.ci/run runs on Node 20)');
  process.stderr.write('\n*** SKIPPED node version warning: no Node older than 22.12 on PATH ***\n\n');
}

describe.skipIf(older === undefined)('netdiag serve on an older Node', () => {
  it('logs a warning naming the Node and the version it is built for, and serves', async () => {
    const child = spawn(older ?? 'node', [CLI, 'serve'], { env: { ...process.env, PORT: '0', HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const lines = await new Promise<{ msg: string; level: string }[]>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('"msg":"listening"')) resolve(out.trim().split('\n').map((line) => JSON.parse(line) as { msg: string; level: string }));
        });
        child.on('exit', (code) => {
          reject(new Error(`serve exited with ${String(code)}: ${out}`));
        });
      });
      const warning = lines.find((l) => l.msg.includes('older than the 22.12 netdiag is built and tested on'));
      expect(warning?.level).toBe('warn');
      expect(warning?.msg).toMatch(/^Node \d+\.\d+\.\d+ is older than/);
    } finally {
      child.kill('SIGTERM');
    }
  }, 30_000);
});
