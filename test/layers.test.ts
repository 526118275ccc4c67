// The layers of src/, and what the clients (web/, the command line's client code) may take from
// it (eslint.layers.js, docs/design.md "Layout"), are enforced by ESLint: a forbidden import fails
// `npm test`'s lint step. Shown here on text linted as if it stood in
// the folder named, with the project's own layer rules.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import ts from 'typescript';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { layerConfigs } from '../eslint.layers.js';

const eslint = new ESLint({
  cwd: new URL('..', import.meta.url).pathname,
  overrideConfigFile: true,
  overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...layerConfigs()],
});

async function problemsOf(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? ''}: ${m.message}`);
}

describe('the import arrows of src/', () => {
  it.each([
    ['src/http/types.ts', "import { ipRoute } from '../ip/route.js';", 'src/http may not import src/ip'],
    ['src/net/address.ts', "import type { HttpReply } from '../http/types.js';", 'src/net may not import src/http'],
    ['src/ports.ts', "import type { Services } from './services.js';", 'src/ports may not import src/services'],
    ['src/dns/route.ts', "import { createApp } from '../app.js';", 'src/dns may not import src/app'],
    ['src/ip/route.ts', "import type { Services } from '../services.js';", 'src/ip may not import src/services'],
    ['src/events/route.ts', "import { ipRoute } from '../ip/route.js';", 'src/events may not import src/ip'],
    ['src/ratelimit/limits.ts', "import { rateLimited } from '../http/rate-limit.js';", 'src/ratelimit may not import src/http'],
    ['src/dns/cache.ts', "import { readFileSync } from 'node:fs';", 'node: imports belong in src/runtime/node'],
    ['src/runtime/node/serve.ts', "import { workerServices } from '../workers/services.js';", "Workers' runtime is not Node's"],
    ['src/runtime/workers/entry.ts', "import { startServer } from '../node/serve.js';", "Node's runtime is not Workers'"],
    // The clients take from the server's folders only what they share with it.
    ['web/report.ts', "import { jsonReply } from '../src/http/respond.js';", 'web/ may import from the server'],
    ['web/i18n/locale.ts', "import { loadConfig } from '../../src/runtime/node/config.js';", 'web/ may import from the server'],
    ['src/cli/watch.ts', "import { createApp } from '../app.js';", "The command line's client code may import from the server"],
    ['src/cli/turn/loss.ts', "import { resolverFor } from '../../dns/resolver.js';", "The command line's client code may import from the server"],
  ])('%s: %s is refused', async (file, code, message) => {
    const problems = await problemsOf(file, code);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('no-restricted-imports');
    expect(problems[0]).toContain(message);
  });

  it.each([
    ['src/ip/route.ts', "import { reverseNameOf } from '../net/reverse.js';\nimport { Problem } from '../http/problems.js';\nimport type { DnsResult } from '../dns/types.js';"],
    ['src/http/rate-limit.ts', "import { sourceOf } from '../net/address.js';\nimport type { Limits } from '../ratelimit/limits.js';\nimport type { Clock } from '../ports.js';"],
    ['src/app.ts', "import { dnsRoute } from './dns/route.js';\nimport { Router } from './http/router.js';"],
    ['src/runtime/node/serve.ts', "import { createApp } from '../../app.js';\nimport { readFileSync } from 'node:fs';"],
    ['web/report.ts', "import { directionRates } from '../src/speedtest/burst.js';\nimport type { Schemas } from '../src/generated/openapi-types.js';\nimport { t } from './i18n/locale.js';"],
    ['src/cli/watch.ts', "import { summarize } from '../latency/series.js';\nimport { print } from './output.js';"],
    ['src/cli/main.ts', "import { loadConfig } from '../runtime/node/config.js';"],
  ])('%s: the arrows that run down are allowed', async (file, code) => {
    expect(await problemsOf(file, code)).toEqual([]);
  });
});

describe('the import graph of src/ and web/', () => {
  /** Every import (type-only ones too) of every source file in src/ and web/, as TypeScript reads them, by path from the repository. */
  function graph(): Map<string, string[]> {
    const root = fileURLToPath(new URL('..', import.meta.url));
    const files = ['src', 'web'].flatMap((folder) =>
      readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'))
        .map((f) => join(folder, f)),
    );
    const edges = new Map<string, string[]>();
    for (const file of files) {
      const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
      const targets = importedFiles
        .map((i) => i.fileName)
        .filter((name) => name.startsWith('.'))
        .map((name) => relative(root, resolve(root, dirname(file), name.replace(/\.js$/, '.ts'))));
      edges.set(file, targets);
    }
    return edges;
  }

  /** A cycle in the graph, as the files around it, or undefined (depth-first, three colours). */
  function findCycle(edges: Map<string, string[]>): string[] | undefined {
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const visit = (node: string): string[] | undefined => {
      if (state.get(node) === 'done') return undefined;
      if (state.get(node) === 'open') return [...stack.slice(stack.indexOf(node)), node];
      state.set(node, 'open');
      stack.push(node);
      for (const next of edges.get(node) ?? []) {
        const cycle = visit(next);
        if (cycle !== undefined) return cycle;
      }
      stack.pop();
      state.set(node, 'done');
      return undefined;
    };
    for (const node of edges.keys()) {
      const cycle = visit(node);
      if (cycle !== undefined) return cycle;
    }
    return undefined;
  }

  it('has no import circle, type-only imports included', () => {
    const edges = graph();
    expect(edges.size).toBeGreaterThan(150);
    // web/ is in it, and its arrows into src/ are read.
    expect(edges.get('web/report.ts')).toContain('src/speedtest/burst.ts');
    expect(findCycle(edges)).toBeUndefined();
  });

  it('the circle check finds a circle when there is one', () => {
    const edges = graph();
    edges.set('src/ports.ts', ['src/services.ts']);
    expect(findCycle(edges)).toEqual(expect.arrayContaining(['src/ports.ts', 'src/services.ts']));
  });
});
