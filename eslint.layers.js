// @ts-check
/**
 * The layers of src/, lowest first, and what each may import (docs/design.md, "Layout"). Every
 * arrow runs one way: runtime → app → capabilities → http → net, ratelimit, metrics, ports. A
 * folder named here may import only the folders its row allows, besides its own files and
 * packages; `npm test` lints it (eslint.config.js) and test/layers.test.ts shows a forbidden
 * import is caught.
 */

/** The capabilities: one folder each, with its routes. */
export const CAPABILITIES = ['ip', 'dns', 'latency', 'events', 'speedtest', 'page', 'problem-docs', 'health', 'openapi'];

/** Shared building blocks at the root of src/, below http/. */
const UTILITIES = ['ports', 'coalescer', 'deferred-timer', 'failure-reason', 'statistics'];
const LOW = ['net', 'ratelimit', 'metrics', 'generated', ...UTILITIES];

/**
 * Folder (or root file) → what it may import. Anything in src/ not listed as allowed is refused.
 * Two capabilities lean on another: `ip` on `dns` (/v1/ip asks the caller's PTR through the
 * resolver and keeps DNS's name rules), `speedtest` on `events` (its configuration names the
 * analytics events a client may send). A capability never sees `Services` (src/services.ts):
 * the app hands each route only the ports and options it reads.
 */
export const LAYERS = {
  ports: [],
  'failure-reason': [],
  statistics: [],
  net: ['ports'],
  generated: [],
  coalescer: ['ports'],
  'deferred-timer': ['ports'],
  ratelimit: ['ports', 'failure-reason', 'deferred-timer'],
  metrics: ['ratelimit', 'ports'],
  config: ['net', 'ratelimit', 'ports', 'generated'],
  http: [...LOW],
  ...Object.fromEntries(CAPABILITIES.map((c) => [c, [...LOW, 'http', ...({ ip: ['dns'], speedtest: ['events'] }[c] ?? [])]])),
  services: [...LOW, 'http', ...CAPABILITIES],
  app: [...LOW, 'http', 'services', ...CAPABILITIES],
};

/** Every name a relative import can reach in src/: folders and root files (without .js). */
const ALL = [...new Set([...Object.keys(LAYERS), ...CAPABILITIES, 'runtime', 'cli', 'config'])];

/** no-restricted-imports patterns refusing what `layer` may not import. */
function forbiddenFor(layer) {
  const allowed = new Set([layer, ...(LAYERS[layer] ?? [])]);
  return ALL.filter((name) => !allowed.has(name)).map((name) => ({
    group: [`**/${name}/**`, `**/${name}.js`],
    message: `src/${layer} may not import src/${name} (docs/design.md, "Layout": the arrows run one way)`,
  }));
}

/**
 * What the clients (the page in web/, and the command line's client commands in src/cli/) may take
 * from the server's folders: the rules they share with it and the contract's types, nothing that
 * serves. Paths from src/, without `.js`. scripts/pack-client.mjs also refuses a client bundle
 * that took in a server module.
 */
export const SHARED_WITH_CLIENTS = [
  'generated/openapi-types',
  'speedtest/share',
  'speedtest/bufferbloat',
  'speedtest/burst',
  'speedtest/metrics',
  'speedtest/configuration',
  'latency/series',
  'ip/families',
  'dns/answer-text',
  'net/origin',
  'i18n/template',
  'statistics',
];

/** The server's folders and root files, as a client's import would reach them: refused but for SHARED_WITH_CLIENTS. */
const SERVER_PARTS = [...new Set([...Object.keys(LAYERS), ...CAPABILITIES, 'runtime', 'config', 'generated', 'i18n'])];
// `prefixes`: how a client import names src/ (any path ending in src/ from web/; ../ and ../../ from src/cli/).
const clientPatterns = (where, prefixes) => [
  {
    group: prefixes.flatMap((at) => [...SERVER_PARTS.flatMap((name) => [`${at}${name}/**`, `${at}${name}.js`]), ...SHARED_WITH_CLIENTS.map((path) => `!${at}${path}.js`)]),
    message: `${where} may import from the server's folders only what the clients share with it (eslint.layers.js, SHARED_WITH_CLIENTS)`,
  },
];

/** The core runs on Workers too: Node's and Cloudflare's modules stay in their runtime folders. */
const RUNTIME_MODULES = [
  { group: ['node:*'], message: 'node: imports belong in src/runtime/node or src/cli' },
  { group: ['cloudflare:*'], message: 'cloudflare: imports belong in src/runtime/workers' },
];

const filesOf = (layer) => (layer in { ports: 1, coalescer: 1, 'deferred-timer': 1, 'failure-reason': 1, statistics: 1, services: 1, app: 1 } ? [`src/${layer}.ts`] : [`src/${layer}/**/*.ts`]);

/**
 * ESLint config blocks: one per layer of the core (its arrows and the runtime-free rule), and the
 * runtimes kept apart from each other. Tests are exempt: they may reach any layer.
 */
export function layerConfigs() {
  return [
    ...Object.keys(LAYERS).map((layer) => ({
      files: filesOf(layer),
      ignores: ['src/**/*.test.ts'],
      rules: { 'no-restricted-imports': ['error', { patterns: [...RUNTIME_MODULES, ...forbiddenFor(layer)] }] },
    })),
    {
      files: ['src/runtime/node/**/*.ts', 'src/cli/**/*.ts'],
      ignores: ['src/**/*.test.ts'],
      rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/runtime/workers/**', '**/workers/**', 'cloudflare:*'], message: "Workers' runtime is not Node's" }] }] },
    },
    // The clients: the page, and the command line but for the two files that start the servers.
    {
      files: ['web/**/*.ts'],
      ignores: ['web/**/*.test.ts'],
      rules: { 'no-restricted-imports': ['error', { patterns: clientPatterns('web/', ['**/src/']) }] },
    },
    {
      files: ['src/cli/**/*.ts'],
      ignores: ['src/**/*.test.ts', 'src/cli/main.ts', 'src/cli/server-process.ts'],
      rules: { 'no-restricted-imports': ['error', { patterns: [...RUNTIME_MODULES.filter((m) => m.group[0] === 'cloudflare:*'), ...clientPatterns("The command line's client code", ['../', '../../'])] }] },
    },
    {
      files: ['src/runtime/workers/**/*.ts'],
      ignores: ['src/**/*.test.ts'],
      rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/runtime/node/**', '**/node/**', '**/cli/**', 'node:*'], message: "Node's runtime is not Workers'" }] }] },
    },
  ];
}
