// A small HTTP/1.1 client on node:http: full control of method, headers and local address.
import { request as httpRequest } from 'node:http';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or null when there is none. */
  body: unknown;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Source address for the client socket (127.0.0.2 etc. are loopback on Linux). */
  localAddress?: string;
}

export function send(url: string, options: RequestOptions = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers = { ...options.headers };
    // Node's client frames a DELETE or GET body only when told its length.
    if (options.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'transfer-encoding')) {
      headers['Content-Length'] ??= String(Buffer.byteLength(options.body));
    }
    const req = httpRequest(
      url,
      { method: options.method ?? 'GET', headers, localAddress: options.localAddress, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
          }
          resolve({ status: res.statusCode ?? 0, headers, text, body: text === '' ? null : (JSON.parse(text) as unknown) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
