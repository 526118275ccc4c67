// The command-line client, from the server you are on (docs/api.md, "The client package"): the
// `npm run pack:client` tarball (netdiag-client, no dependencies, so npm installs it from this
// URL with no registry) at one fixed path, so the page and the README can give one command that
// installs it: `npm install -g <origin>/client/netdiag-client.tgz`. The runtime hands the bytes
// in when the build left them (Node, from dist/client/); where it has none (Workers) the path
// answers 404 and says so, and the page gives no install command.
import { CACHE } from '../core/http/headers.js';
import { baseHeaders } from '../core/http/respond.js';
import { matches } from '../core/http/static-asset.js';
import { Problem } from '../core/http/problems.js';
import type { RouteDefinition } from '../core/http/router.js';
import type { Handler } from '../core/http/types.js';

/** Where the client package is served: one path whatever its version, so a command stays right. */
export const CLIENT_PACKAGE_PATH = '/client/netdiag-client.tgz';

/** The packed client as the build left it. */
export interface ClientPackage {
  /** The tarball's bytes (gzip-compressed tar, npm's package format). */
  bytes: Uint8Array;
  /** Its file name with the version, for a browser that saves it (`netdiag-client-0.1.0.tgz`). */
  fileName: string;
  /** Quoted strong tag of the bytes. */
  etag: string;
}

export function clientPackageRoute(pkg: ClientPackage | undefined): RouteDefinition {
  const handle: Handler = (ctx) => {
    if (pkg === undefined) throw new Problem('not_found', 'This server has no client package to serve: it runs where the build leaves none (Workers), or its build did not pack one (`npm run build` does). docs/command-line.md says how to install the client otherwise.');
    const headers = baseHeaders(ctx, CACHE.noCache);
    const ifNoneMatch = ctx.req.header('if-none-match');
    // The static assets' rule (weak comparison, `*`, the list read to its first 1024 characters).
    if (ifNoneMatch !== undefined && matches(ifNoneMatch, pkg.etag)) {
      headers.push('ETag', pkg.etag);
      return { status: 304, headers, body: null };
    }
    headers.push('Content-Type', 'application/gzip', 'Content-Length', String(pkg.bytes.byteLength), 'Content-Disposition', `attachment; filename="${pkg.fileName}"`, 'ETag', pkg.etag, 'X-Content-Type-Options', 'nosniff');
    // A gzip file as a file (application/gzip), not a coded body: no Content-Encoding.
    return { status: 200, headers, body: null, stream: { length: pkg.bytes.byteLength, chunks: () => [pkg.bytes][Symbol.iterator]() } };
  };
  // Counted with the speed test's transfers: bulk bytes, a few hundred kB each.
  return { path: CLIENT_PACKAGE_PATH, GET: { limit: 'speedtest', handle } };
}
