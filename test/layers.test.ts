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
import { LAYERS, layerConfigs, unitOf } from '../eslint.layers.js';

const eslint = new ESLint({
  cwd: new URL('..', import.meta.url).pathname,
  overrideConfigFile: true,
  overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...layerConfigs()],
});

async function problemsOf(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? ''}: ${m.message}`);
}

describe('what an import string tells: the runtimes, and the clients', () => {
  it.each([
    ['src/engines/dns/cache.ts', "import { readFileSync } from 'node:fs';", 'node: imports belong in src/runtime/node'],
    ['src/core/http/respond.ts', "import { startServer } from '../../runtime/node/serve.js';", 'the core does not import a runtime'],
    ['src/runtime/node/adapter/serve.ts', "import { workerServices } from '../workers/services.js';", "Workers' runtime is not Node's"],
    ['src/runtime/workers/adapter/entry.ts', "import { startServer } from '../node/serve.js';", "Node's runtime is not Workers'"],
    // The clients take from src/ only what src/common/ and the contract's types give.
    ['web/speedtest/result-text.ts', "import { jsonReply } from '../src/core/http/respond.js';", 'web/ may import only src/common/'],
    ['web/i18n/locale.ts', "import { loadConfig } from '../../src/runtime/node/config.js';", 'web/ may import only src/common/'],
    ['src/cli/watch/command.ts', "import { createApp } from '../../app/app.js';", "The command line's client code may import only src/common/"],
    ['src/cli/speedtest/turn/relay-loss.ts', "import { createResolver } from '../../../engines/dns/resolver.js';", "The command line's client code may import only src/common/"],
  ])('%s: %s is refused', async (file, code, message) => {
    const problems = await problemsOf(file, code);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('no-restricted-imports');
    expect(problems[0]).toContain(message);
  });

  it.each([
    ['web/speedtest/result-text.ts', "import { measureDirection } from '../src/common/speedtest/working.js';\nimport type { Schemas } from '../src/generated/openapi-types.js';\nimport { t } from './i18n/locale.js';"],
    ['src/cli/watch/command.ts', "import { summarize } from '../../common/series.js';\nimport { print } from '../terminal/output.js';"],
    ['src/cli/speedtest/turn/relay-loss.ts', "import { percentile } from '../../../common/statistics.js';\nimport { print } from '../../terminal/output.js';"],
    ['src/cli/main.ts', "import { loadConfig } from '../runtime/node/config.js';"],
    ['src/runtime/node/adapter/serve.ts', "import { createApp } from '../../app/app.js';\nimport { readFileSync } from 'node:fs';"],
  ])('%s: allowed', async (file, code) => {
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
    expect(edges.get('web/speedtest/speed-result.ts')).toContain('src/common/speedtest/working.ts');
    expect(findCycle(edges)).toBeUndefined();
  });

  /** Each import whose unit may not import the other's (eslint.layers.js, LAYERS), as `from -> to`. */
  function upward(edges: Map<string, string[]>): string[] {
    const wrong: string[] = [];
    for (const [from, targets] of edges) {
      const unit = unitOf(from);
      const allowed = LAYERS[unit];
      for (const to of targets) {
        const target = unitOf(to);
        if (target !== unit && !(allowed ?? []).includes(target)) wrong.push(`${from} -> ${to} (${unit} may not import ${target})`);
      }
    }
    return wrong;
  }

  it('every file is in a unit the layers name, and no import runs against them', () => {
    const edges = graph();
    const unnamed = [...edges.keys()].filter((file) => !(unitOf(file) in LAYERS));
    expect(unnamed).toEqual([]);
    expect(upward(edges)).toEqual([]);
  });

  it('the layer check finds an import that runs up, and one across two features', () => {
    const edges = graph();
    edges.set('src/core/http/types.ts', [...(edges.get('src/core/http/types.ts') ?? []), 'src/features/ip/route.ts']);
    edges.set('src/features/events/route.ts', ['src/features/ip/route.ts']);
    expect(upward(edges)).toEqual([
      'src/core/http/types.ts -> src/features/ip/route.ts (core/http may not import features/ip)',
      'src/features/events/route.ts -> src/features/ip/route.ts (features/events may not import features/ip)',
    ]);
  });

  it('no feature may import another: what two share is an engine, the core or common', () => {
    const features = Object.keys(LAYERS).filter((unit) => unit.startsWith('features/'));
    expect(features.length).toBeGreaterThan(5);
    expect(features.flatMap((f) => (LAYERS[f] ?? []).filter((u) => u.startsWith('features/')).map((u) => `${f} -> ${u}`))).toEqual([]);
  });

  it('the folders of src/ are the ones docs/design.md lays out', () => {
    const layout = readFileSync(new URL('../docs/design.md', import.meta.url), 'utf8');
    const src = fileURLToPath(new URL('../src/', import.meta.url));
    const folders = ['', 'core/', 'engines/', 'features/', 'common/', 'runtime/'].flatMap((under) =>
      readdirSync(join(src, under), { withFileTypes: true })
        .filter((e) => e.isDirectory() && e.name !== 'generated')
        .map((e) => `src/${under}${e.name}/`),
    );
    expect(folders.length).toBeGreaterThan(12);
    expect(folders.filter((folder) => !layout.includes(folder))).toEqual([]);
  });

  /**
   * The folders docs/design.md's tree names, by path: a folder's entry is its line (`  name/  ...`,
   * indented two spaces a level, or a path such as `runtime/node/`) within the block that starts `src/`.
   */
  function treeFolders(layout: string): Set<string> {
    const start = layout.indexOf('```\nsrc/\n');
    const end = layout.indexOf('\n```', start + 4);
    const named = new Set<string>();
    const stack: string[] = [];
    for (const line of layout.slice(start + 4, end).split('\n')) {
      const indent = line.length - line.trimStart().length;
      const token = line.trimStart().split(/\s+/)[0] ?? '';
      if (indent < 20 && token.endsWith('/')) {
        const depth = indent / 2;
        stack.length = depth;
        stack[depth] = token;
        // `runtime/node/` names runtime/ too.
        const path = stack.join('');
        for (let cut = path.indexOf('/'); cut !== -1; cut = path.indexOf('/', cut + 1)) named.add(path.slice(0, cut + 1));
      }
    }
    return named;
  }

  // The tree names folders, not files, so a file moved within its folder is no docs edit; a folder
  // added, moved or removed is, since the tree says what each holds.
  it("docs/design.md's tree names every folder of src/ and web/, and no folder that is not there", () => {
    const layout = readFileSync(new URL('../docs/design.md', import.meta.url), 'utf8');
    const root = fileURLToPath(new URL('..', import.meta.url));
    const folders = ['src', 'web'].flatMap((top) => [
      `${top}/`,
      ...readdirSync(join(root, top), { recursive: true, withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => `${relative(root, join(e.parentPath, e.name))}/`)
        .filter((f) => !f.startsWith('src/generated/') || f === 'src/generated/'),
    ]);
    expect(folders.length).toBeGreaterThan(40);
    const named = treeFolders(layout);
    expect(folders.filter((f) => !named.has(f))).toEqual([]);
    expect([...named].filter((f) => /^(src|web)\//.test(f) && !folders.includes(f))).toEqual([]);
  });

  it('the circle check finds a circle when there is one', () => {
    const edges = graph();
    edges.set('src/core/ports/clock.ts', ['src/app/services.ts']);
    expect(findCycle(edges)).toEqual(expect.arrayContaining(['src/core/ports/clock.ts', 'src/app/services.ts']));
  });
});

// What the clients hold once (docs/design.md, "The clients"): the speed test's load loop, the
// reading of Server-Timing, and the report a speed test prints. A second copy in a client would
// drift from the first, as the page's and the command line's loops did.
describe('what the clients hold once', () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  /** The clients' source files (src/cli/, web/, src/common/), tests and test-only suites left out, with their code. */
  function clientSources(): [string, string][] {
    return [
      ...readdirSync(join(root, 'src/cli'), { recursive: true, encoding: 'utf8' }).map((f) => `src/cli/${f}`),
      ...readdirSync(join(root, 'src/common'), { recursive: true, encoding: 'utf8' }).map((f) => `src/common/${f}`),
      ...readdirSync(join(root, 'web'), { recursive: true, encoding: 'utf8' }).map((f) => `web/${f}`),
    ]
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.conformance.ts'))
      .map((f) => [f, withoutComments(readFileSync(join(root, f), 'utf8'))]);
  }

  /** A file's code without its comments (a comment may name what it does not do). */
  const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

  /** The files whose text matches `pattern`. */
  const holding = (sources: [string, string][], pattern: RegExp) => sources.filter(([, text]) => pattern.test(text)).map(([file]) => file);

  // The rules a loop applies while it loads: only the loop may call them.
  const LOOP_RULES = /\b(?:nextUploadBytes|directionDone|probeGapMs|receivedUpload|UPLOAD_ANSWER_GRACE_MS)\b/;
  // Parsing a Server-Timing metric's duration.
  const SERVER_TIMING_PARSE = /dur=|['"`]dur['"`]/;

  it('the load loop: only src/common/speedtest/load-loop.ts applies the loading rules of working.ts', () => {
    expect(holding(clientSources(), LOOP_RULES)).toEqual(['src/common/speedtest/load-loop.ts', 'src/common/speedtest/working.ts']);
  });

  it('Server-Timing: only src/common/speedtest/server-timing.ts parses a metric', () => {
    expect(holding(clientSources(), SERVER_TIMING_PARSE)).toEqual(['src/common/speedtest/server-timing.ts']);
  });

  it('the report: the speed test and rpm commands return the one report type', () => {
    const text = (file: string) => readFileSync(join(root, file), 'utf8');
    expect(text('src/cli/speedtest/command.ts')).toMatch(/\): SpeedTestReport \{/);
    expect(text('src/cli/rpm/command.ts')).toMatch(/\): RpmReport \{/);
  });

  it('finds a second copy: a client that parses Server-Timing or runs its own loop', () => {
    const copy: [string, string][] = [['web/speedtest/own-loop.ts', "const bytes = nextUploadBytes(rate);\nconst ms = /body;dur=([0-9.]+)/.exec(header);"]];
    expect(holding(copy, LOOP_RULES)).toEqual(['web/speedtest/own-loop.ts']);
    expect(holding(copy, SERVER_TIMING_PARSE)).toEqual(['web/speedtest/own-loop.ts']);
  });
});

// The client half shows its shape by its folders (docs/design.md, "Layout"): a command or a feature
// is a folder, and the root of each client holds only what starts it.
describe("the clients' roots hold only their entry points", () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const filesAt = (folder: string) => readdirSync(join(root, folder), { withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name).sort();

  it('src/cli/: the netdiag package and the client package start there, nothing else', () => {
    expect(filesAt('src/cli')).toEqual(['client-main.ts', 'main.ts']);
  });

  it('web/: what a browser loads (the HTML, its script, its style), nothing else', () => {
    expect(filesAt('web')).toEqual(['index.html', 'main.ts', 'page.css']);
  });
});
