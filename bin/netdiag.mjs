#!/usr/bin/env node
// The `netdiag` bin. In a checkout (`npx netdiag …`, or `npm install -g .`, which links the
// checkout) it first brings dist/ up to date as `npm start` does, so the command never runs
// stale code: the check runs in this process (build-state.mjs), and only a stale build starts
// the build, whose output goes to standard error, keeping standard output the command's. An
// installed package carries dist/ and no sources, and runs it as it is.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const scripts = new URL('../scripts/', import.meta.url);
if (existsSync(fileURLToPath(new URL('../src/cli/main.ts', import.meta.url))) && existsSync(fileURLToPath(new URL('build-state.mjs', scripts)))) {
  const { buildState, isCurrent } = await import(new URL('build-state.mjs', scripts).href);
  if (!isCurrent(buildState())) {
    const built = spawnSync(process.execPath, [fileURLToPath(new URL('build-if-stale.mjs', scripts))], { stdio: ['ignore', 2, 2] });
    if (built.status !== 0) {
      process.stderr.write('netdiag: the build failed (see above); run `npm run build` in the checkout\n');
      process.exit(1);
    }
  }
}
await import('../dist/cli/main.js');
