// @ts-check
/**
 * The layers of src/ and what each may import (docs/design.md, "Layout"). The folders name them:
 *
 *   src/core/      the server's own infrastructure: http/, net/, ratelimit/, config/, and ports/
 *                  (each port's contract and its conformance suite). No client imports it.
 *   src/common/    the rules the clients (the page, the command line's client code) share with the
 *                  server: the one folder of src/ a client may import (with the contract's
 *                  generated types), and it imports nothing of ours outside itself
 *   src/engines/   the machinery a feature runs on, behind no route: dns/ (the resolver: wire,
 *                  cache, circuit, DoH) and events/ (delivery: batching, the queue, the HTTP sink)
 *   src/features/  one capability each, its routes: ip/, dns/, latency/, events/, speedtest/,
 *                  page, health, openapi, problem-docs, client-package
 *   src/app/       the assembly: createApp and the Services it is built from
 *   src/runtime/   each runtime's adapter and its implementations of the core's ports: node/, workers/
 *   src/cli/       the command line (its client code a client like the page)
 *
 * Every arrow runs one way: runtime → app → features → engines → core, common. LAYERS below is checked on
 * the resolved import graph by test/layers.test.ts (an import string cannot tell
 * src/core/ports/logger.ts from src/runtime/node/ports/logger.ts once folders nest, a resolved path can);
 * ESLint (layerConfigs) refuses the imports that an import string does tell: Node's and
 * Cloudflare's modules outside their runtime, one runtime in the other, and a client reaching
 * past src/common/.
 */

/**
 * A source file's unit, by its path from the repository: a folder of core/ or features/, a file
 * standing alone in either, or a top folder (common, app, generated, cli, runtime/node,
 * runtime/workers); web/ is one unit.
 * @param {string} path
 * @returns {string}
 */
export function unitOf(path) {
  const parts = path.split('/');
  if (parts[0] === 'web') return 'web';
  if (parts[1] === 'runtime') return parts.slice(1, 3).join('/');
  if (parts[1] === 'core' || parts[1] === 'features' || parts[1] === 'engines') return parts.length > 3 ? parts.slice(1, 3).join('/') : parts.slice(1).join('/').replace(/\.ts$/, '');
  return parts[1] ?? path;
}

const FEATURES = ['features/ip', 'features/dns', 'features/latency', 'features/events', 'features/speedtest', 'features/page', 'features/health', 'features/openapi', 'features/problem-docs', 'features/client-package', 'features/servers'];
const ENGINES = ['engines/dns', 'engines/events'];
const CORE_LOW = ['core/ports', 'core/header-cap', 'core/failure-reason', 'core/coalescer', 'core/deferred-timer', 'core/net', 'core/ratelimit', 'core/config'];
const CORE = [...CORE_LOW, 'core/http'];
const SERVER = ['app', ...CORE, ...ENGINES, ...FEATURES, 'common', 'generated'];

/**
 * Unit → the units it may import (besides its own files). No feature imports another: what two
 * share is an engine (/v1/ip asks the caller's PTR through the DNS resolver and keeps its name
 * rules) or common (the analytics event names the speed test's configuration lists). A
 * feature never sees `Services` (src/app/services.ts): the app hands each route only the ports
 * and options it reads. The clients (web/ and the command line's client code) take only what
 * src/common/ and the contract's generated types give.
 * @type {Readonly<Record<string, readonly string[]>>}
 */
export const LAYERS = {
  'core/header-cap': [],
  'core/failure-reason': [],
  generated: [],
  // The clients' shared rules may read the contract's generated parts (its types, the reports' validators).
  common: ['generated'],
  'core/net': ['core/header-cap'],
  // A port's contract may name the core's address type and the contract's own lists.
  'core/ports': ['core/net', 'common', 'generated'],
  'core/coalescer': ['core/ports'],
  'core/deferred-timer': ['core/ports'],
  'core/ratelimit': ['core/ports', 'core/failure-reason', 'core/deferred-timer'],
  'core/config': ['core/net', 'core/ratelimit', 'core/ports', 'common', 'generated'],
  'core/http': [...CORE_LOW, 'common', 'generated'],
  ...Object.fromEntries(ENGINES.map((e) => [e, [...CORE, 'common', 'generated']])),
  ...Object.fromEntries(FEATURES.map((f) => [f, [...CORE, ...ENGINES, 'common', 'generated']])),
  app: [...CORE, ...ENGINES, ...FEATURES, 'common', 'generated'],
  'runtime/node': SERVER,
  'runtime/workers': SERVER,
  // The command line: its server starters (main.ts, servers/) reach the Node runtime
  // and the configuration tables; its client code is held to common/ by ESLint (below).
  cli: ['common', 'generated', 'runtime/node', 'core/config'],
  web: ['common', 'generated'],
};

/** The core runs on Workers too: Node's and Cloudflare's modules stay in their runtime folders. */
const RUNTIME_MODULES = [
  { group: ['node:*'], message: 'node: imports belong in src/runtime/node or src/cli' },
  { group: ['cloudflare:*'], message: 'cloudflare: imports belong in src/runtime/workers' },
];

/** What a client may import of src/, as its import strings say it (`prefixes`: how it names src/). */
const clientPatterns = (/** @type {string} */ where, /** @type {string[]} */ prefixes) => [
  {
    // The monitor's page (generated from web/monitor/) is the command line's own, served by `netdiag monitor`.
    group: prefixes.flatMap((at) => [`${at}*/**`, `${at}*.js`, `!${at}common/**`, `!${at}generated/openapi-types.js`, `!${at}generated/monitor-page-assets.js`, `!${at}cli/**`]),
    message: `${where} may import only src/common/, the contract's types and the monitor's page (docs/design.md, "Layout")`,
  },
];

/**
 * ESLint config blocks: the runtime-free core, the runtimes kept apart, and the clients kept to
 * src/common/. Tests are exempt: they may reach any layer.
 */
export function layerConfigs() {
  return [
    {
      files: ['src/core/**/*.ts', 'src/common/**/*.ts', 'src/engines/**/*.ts', 'src/features/**/*.ts', 'src/app/**/*.ts'],
      ignores: ['src/**/*.test.ts'],
      rules: { 'no-restricted-imports': ['error', { patterns: [...RUNTIME_MODULES, { group: ['**/runtime/**', '**/cli/**'], message: 'the core does not import a runtime or the command line (docs/design.md, "Layout")' }] }] },
    },
    {
      files: ['src/runtime/node/**/*.ts', 'src/cli/**/*.ts'],
      ignores: ['src/**/*.test.ts'],
      rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/runtime/workers/**', '**/workers/**', 'cloudflare:*'], message: "Workers' runtime is not Node's" }] }] },
    },
    {
      files: ['src/runtime/workers/**/*.ts'],
      ignores: ['src/**/*.test.ts'],
      rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/runtime/node/**', '**/node/**', '**/cli/**', 'node:*'], message: "Node's runtime is not Workers'" }] }] },
    },
    // The clients: the page, and the command line but for the two files that start the servers.
    {
      files: ['web/**/*.ts'],
      ignores: ['web/**/*.test.ts'],
      rules: { 'no-restricted-imports': ['error', { patterns: clientPatterns('web/', ['../src/', '../../src/', '../../../src/']) }] },
    },
    // The command line's client code, by depth: an import string names src/ by as many `../` as
    // the file stands below src/cli/, so each depth has its own patterns.
    ...['src/cli/*.ts', 'src/cli/*/*.ts', 'src/cli/*/*/*.ts'].map((files, depth) => ({
      files: [files],
      ignores: ['src/**/*.test.ts', 'src/cli/main.ts', 'src/cli/servers/**'],
      rules: { 'no-restricted-imports': ['error', { patterns: [RUNTIME_MODULES[1], ...clientPatterns("The command line's client code", ['../'.repeat(depth + 1)])] }] },
    })),
  ];
}
