// node bench/rpm-minimal-server.mjs --host ADDR --port N --cert FILE --key FILE
//
// The smallest server a responsiveness client can measure: node:http2 over TLS, serving the
// draft's configuration and its three URLs and nothing else. `npm run bench:rpm` runs it beside
// `netdiag serve` on the same link, so whatever wait netdiag's server adds under load shows as the
// difference between the two. No logging, no rate limit, no routing: the baseline.
import { readFileSync } from 'node:fs';
import { createSecureServer } from 'node:http2';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { host: { type: 'string' }, port: { type: 'string' }, cert: { type: 'string' }, key: { type: 'string' } } });
const LARGE = 8 * 1024 ** 3;
const CHUNK = Buffer.alloc(16 * 1024);

/** The large object: written as fast as the client takes it (each write waits for the stream to drain). */
function large(res) {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(LARGE), 'cache-control': 'no-store' });
  let left = LARGE;
  const pump = () => {
    while (left > 0 && !res.destroyed) {
      left -= CHUNK.length;
      if (!res.write(CHUNK)) {
        res.once('drain', pump);
        return;
      }
    }
    if (left <= 0) res.end();
  };
  pump();
}

const server = createSecureServer({ cert: readFileSync(values.cert), key: readFileSync(values.key), allowHTTP1: true }, (req, res) => {
  const origin = `https://${req.headers[':authority'] ?? req.headers.host}`;
  if (req.url === '/.well-known/nq') {
    const urls = { small: `${origin}/nq/small`, large: `${origin}/nq/large`, upload: `${origin}/nq/upload` };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ version: 1, urls: { small_download_url: urls.small, large_download_url: urls.large, upload_url: urls.upload, small_https_download_url: urls.small, large_https_download_url: urls.large, https_upload_url: urls.upload } }));
  } else if (req.url === '/nq/small') {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': '1', 'cache-control': 'no-store' });
    res.end('0');
  } else if (req.url === '/nq/large') {
    large(res);
  } else if (req.url === '/nq/upload' && req.method === 'POST') {
    req.on('data', () => undefined);
    req.on('end', () => res.end());
  } else {
    res.writeHead(404);
    res.end();
  }
});
server.on('sessionError', () => undefined);
server.listen(Number(values.port), values.host, () => {
  process.stdout.write('listening\n');
});
process.on('SIGTERM', () => process.exit(0));
