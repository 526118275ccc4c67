// A DNS-over-HTTPS front (RFC 8484, POST) for the real Knot server, with a self-signed
// certificate made by openssl for 127.0.0.1. It relays each message to Knot over UDP unchanged.
import { execFileSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface DohRelay {
  url: string;
  caFile: string;
  close(): Promise<void>;
}

export function selfSignedCertificate(): { certFile: string; keyFile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-cert-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', keyFile, '-out', certFile],
    { stdio: 'ignore' },
  );
  return { certFile, keyFile };
}

export async function startDohRelay(upstreamPort: number): Promise<DohRelay> {
  const { certFile, keyFile } = selfSignedCertificate();
  const server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (req, res) => {
    if (req.method !== 'POST' || req.url !== '/dns-query' || req.headers['content-type'] !== 'application/dns-message') {
      res.writeHead(400).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const socket = createSocket('udp4');
      socket.on('message', (message) => {
        socket.close();
        res.writeHead(200, { 'Content-Type': 'application/dns-message', 'Content-Length': message.length }).end(message);
      });
      socket.send(Buffer.concat(chunks), upstreamPort, '127.0.0.1');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `https://127.0.0.1:${port}/dns-query`,
    caFile: certFile,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
