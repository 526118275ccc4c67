// `npm run pack:client`: the `netdiag` client commands alone as a package of their own,
// netdiag-client (docs/command-line.md, "Installing the client alone"). The whole package is
// mostly geo tables and the servers' dependencies, none of which the client reads. esbuild
// bundles the compiled client entry (dist/cli/client-main.js, so run after a build: the npm
// script builds first when a source changed) with its packages into one file, and SQLite's
// WebAssembly (node-sqlite3-wasm, the monitor's history on a Node without node:sqlite) goes
// beside it, so the package has no dependencies and installs from its tarball without a
// registry. Writes dist/client/netdiag-client-<version>.tgz and prints its size.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const entry = join(root, 'dist', 'cli', 'client-main.js');
const out = join(root, 'dist', 'client');
const BIN = 'netdiag.mjs';
/** node-sqlite3-wasm's compiled SQLite, which its loader reads from the folder its code is in: beside the bundle. */
const SQLITE_WASM = join(root, 'node_modules', 'node-sqlite3-wasm', 'dist', 'node-sqlite3-wasm.wasm');

/** The run-time dependencies the client commands use; every other one is the servers'. */
const CLIENT_PACKAGES = ['commander', 'cli-progress', 'undici', 'yaml', 'croner', 'prom-client', 'node-sqlite3-wasm', 'mqtt'];
const SERVER_PACKAGES = Object.keys(pkg.dependencies).filter((name) => !CLIENT_PACKAGES.includes(name));
/** Compiled modules only the servers use: an import of one from the client's code would bring the server with it. */
const SERVER_MODULES = [/^dist\/runtime\//, /^dist\/core\//, /^dist\/features\//, /^dist\/app\//, /^dist\/data\//, /^dist\/cli\/(main|server-process)\.js$/];

/** The package a bundled file comes from (`node_modules/<name>/…`, scoped or nested), or undefined for this project's own. */
function packageOf(path) {
  const match = /^(.*?node_modules\/((?:@[^/]+\/)?[^/]+))\/(?!.*\/node_modules\/)/.exec(path);
  return match === null ? undefined : { name: match[2], dir: join(root, match[1]) };
}

const kB = (bytes) => `${(bytes / 1000).toFixed(1)} kB`;

/** A failure of the packing, said in one line (no stack trace: nothing is wrong with this script). */
class PackFailure extends Error {}

/** Bundles into `stage`, writes the package's other files there, and packs it into dist/client/. */
async function pack(stage) {
  if (!existsSync(entry)) throw new PackFailure('dist/cli/client-main.js is not built; run `npm run pack:client`, which builds first');
  const bundle = join(stage, BIN);
  const result = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile: bundle,
    bundle: true,
    platform: 'node',
    // The client's floor (engines below): esbuild lowers any newer syntax; Node APIs it cannot
    // lower, so test/cli/client-package.test.ts runs the installed command on Node 20 and 22.
    target: 'node20',
    format: 'esm',
    // Without the package.json that src/cli/program/version.ts reads beside dist/, the version is written in.
    define: { NETDIAG_BUNDLED_VERSION: JSON.stringify(pkg.version) },
    // The CommonJS packages (undici, cli-progress) require Node's modules, which an ES module
    // bundle can only do through a require of its own; node-sqlite3-wasm finds its .wasm in
    // __dirname, which an ES module has not: the bundle's folder, where the .wasm is.
    banner: {
      js: [
        "import { createRequire as netdiagCreateRequire } from 'node:module';",
        "import { dirname as netdiagDirname } from 'node:path';",
        "import { fileURLToPath as netdiagFileURLToPath } from 'node:url';",
        'const require = netdiagCreateRequire(import.meta.url);',
        'const __filename = netdiagFileURLToPath(import.meta.url);',
        'const __dirname = netdiagDirname(__filename);',
      ].join('\n'),
    },
    minify: true,
    // Minified, yet class and function names stay as written (an error's name is printed).
    keepNames: true,
    // MQTT.js (the monitor's mqtt: outlet) brings readable-stream, a copy of Node's own streams for
    // browsers, and worker-timers, read only in a browser's web worker: Node's own stream module
    // stands for the first, an empty module for the second (scripts/empty-module.cjs).
    alias: { 'readable-stream': 'node:stream', 'worker-timers': './scripts/empty-module.cjs' },
    metafile: true,
    logLevel: 'warning',
  });
  chmodSync(bundle, 0o755);
  if (!existsSync(SQLITE_WASM)) throw new PackFailure('node_modules/node-sqlite3-wasm has no dist/node-sqlite3-wasm.wasm; run `npm ci`');
  copyFileSync(SQLITE_WASM, join(stage, 'node-sqlite3-wasm.wasm'));
  chmodSync(join(stage, 'node-sqlite3-wasm.wasm'), 0o644);

  // What went in: never a server module or package (a top-level import of one from the client's
  // code would bring it), and each package's share of the bundle, to see what the size is made of.
  const inputs = result.metafile.outputs[Object.keys(result.metafile.outputs)[0]].inputs;
  const server = Object.keys(inputs).filter((path) => SERVER_MODULES.some((re) => re.test(path)) || SERVER_PACKAGES.includes(packageOf(path)?.name));
  if (server.length > 0) throw new PackFailure(`the client bundle pulled in server code:\n${server.map((p) => `  ${p}`).join('\n')}`);
  const shares = new Map();
  const packages = new Map();
  for (const [path, { bytesInOutput }] of Object.entries(inputs)) {
    const from = packageOf(path);
    if (from !== undefined) packages.set(from.name, from.dir);
    const name = from?.name ?? 'netdiag';
    shares.set(name, (shares.get(name) ?? 0) + bytesInOutput);
  }

  // The bundled packages' licences travel with their code (each is MIT or alike: it asks for its notice).
  const notices = [...packages].sort(([a], [b]) => a.localeCompare(b)).map(([name, dir]) => {
    const { version, license } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const file = readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
    if (file === undefined) throw new PackFailure(`${name} has no licence file to ship with its code`);
    return `## ${name} ${version} (${license})\n\n${readFileSync(join(dir, file), 'utf8').trim()}\n`;
  });
  writeFileSync(join(stage, 'THIRD-PARTY-LICENSES.md'), `# Licences of the packages bundled into ${BIN}\n\n${notices.join('\n')}`);
  writeFileSync(join(stage, 'LICENSE'), readFileSync(join(root, 'LICENSE')));
  writeFileSync(
    join(stage, 'package.json'),
    `${JSON.stringify(
      {
        name: 'netdiag-client',
        version: pkg.version,
        description: 'The netdiag command-line client alone: ip, dns, latency, speedtest, config and watch against any netdiag deployment',
        license: pkg.license,
        type: 'module',
        engines: { node: '>=20' },
        bin: { netdiag: BIN },
      },
      null,
      2,
    )}\n`,
  );
  writeFileSync(join(stage, 'README.md'), readme(pkg.version));

  const packedTo = mkdtempSync(join(tmpdir(), 'netdiag-client-packed-'));
  const packed = spawnSync('npm', ['pack', '--json', '--pack-destination', packedTo], { cwd: stage, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (packed.status !== 0) throw new PackFailure(`npm pack failed (exit ${String(packed.status)})`);
  const [{ filename, size, unpackedSize, entryCount }] = JSON.parse(packed.stdout);
  // Into place by a rename within the folder, then every other tarball out: a server starting
  // meanwhile (it serves the one it finds, src/runtime/node/adapter/load-client-package.ts) never finds none
  // or half of one. Its .npmignore keeps the tarball out of the full package, whose `files` take all of dist/.
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, '.npmignore'), '*\n');
  copyFileSync(join(packedTo, filename), join(out, `${filename}.partial`));
  renameSync(join(out, `${filename}.partial`), join(out, filename));
  for (const other of readdirSync(out)) if (other !== filename && other !== '.npmignore') rmSync(join(out, other), { force: true });
  rmSync(packedTo, { recursive: true, force: true });
  const parts = [...shares].sort((a, b) => b[1] - a[1]).map(([name, bytes]) => `${name} ${kB(bytes)}`);
  process.stdout.write(`dist/client/${filename}: ${kB(size)} packed (${kB(unpackedSize)} unpacked, ${String(entryCount)} files)\n`);
  process.stdout.write(`${BIN}: ${parts.join(', ')}\n`);
}

const stage = mkdtempSync(join(tmpdir(), 'netdiag-client-'));
try {
  await pack(stage);
} catch (err) {
  if (!(err instanceof PackFailure)) throw err;
  process.stderr.write(`pack-client: ${err.message}\n`);
  // After a failure the last good tarball is not left to pass for this build's.
  rmSync(out, { recursive: true, force: true });
  process.exitCode = 1;
} finally {
  rmSync(stage, { recursive: true, force: true });
}

/** The client package's own README: what it is, how to install it, its commands. */
function readme(version) {
  return `# netdiag-client

The \`netdiag\` command-line client alone: it asks any netdiag deployment, yours or anyone's, over
its public API. One bundled file with no dependencies, for Node 20 or newer, and beside it SQLite
compiled to WebAssembly for \`netdiag monitor\`'s history on a Node without \`node:sqlite\`. The servers
(\`netdiag serve\`, \`netdiag probe\`) and their geo data are in the full netdiag package.

\`\`\`sh
npm install -g netdiag-client-${version}.tgz   # from the tarball that \`npm run pack:client\` writes
npm install -g https://netdiag.example/client/netdiag-client.tgz   # or from any netdiag server, which serves it
\`\`\`

| command | what it does |
|---|---|
| \`netdiag ip [-4\\|-6\\|--both]\` | your address, reverse name, network, location and connection as the deployment sees them |
| \`netdiag dns NAME [TYPE]\` | resolves through the deployment's resolver (A, AAAA, CNAME, MX, NS, TXT or PTR) |
| \`netdiag latency [REGION]\` | the deployment's round trip to its regions, and yours to the deployment |
| \`netdiag speedtest [--mode light\\|full] [--no-analytics] [--no-packet-loss] [--share]\` | download, upload, latency, jitter, bufferbloat and packet loss |
| \`netdiag config\` | the speed-test configuration: each mode's steps |
| \`netdiag watch [REGION...] [--interval S] [--count N] [--max-rtt MS] [--max-loss PERCENT]\` | round trips over time; exit 3 when a threshold was crossed |
| \`netdiag monitor [--config FILE]\`, \`netdiag monitor history\` | scheduled checks with a local SQLite history and alerts after repeated breaches (node:sqlite on Node 22.13+, else the WebAssembly SQLite) |

Every command takes \`--url URL\` (else \`NETDIAG_URL\`, else \`http://localhost:8080\`), \`--json\`,
\`--timeout SECONDS\` and \`--help\`. Exit status: 0 success, 1 the API or the network failed, 2 bad
usage, 3 a \`watch\` threshold crossed. More: docs/command-line.md in the netdiag repository.

MIT licence (LICENSE); the bundled packages' licences are in THIRD-PARTY-LICENSES.md.
`;
}
