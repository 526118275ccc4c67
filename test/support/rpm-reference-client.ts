// An independent responsiveness client, written from draft-ietf-ippm-responsiveness alone to hold
// the netdiag server to clients it did not write (issue 49): it shares no code with `netdiag rpm`
// (src/cli/rpm-*.ts, src/common/responsiveness/) and takes the draft's steps its own way. Test-only.
//
// The draft, as this client reads it: fetch the configuration; per direction, open one
// load-generating HTTP/2 connection and add one each interval (1 s) until the goodput is
// saturated (the standard deviation of the last 4 moving averages, each over 4 intervals, under
// 5% of the newest); then probe: foreign probes (a new TCP and TLS connection and a GET of the
// small object, each step timed) and self probes (a GET of the small object on a random
// load-generating connection); responsiveness = 60000 / (1/6·(TM(tcp) + TM(tls) + TM(http)) +
// 1/2·TM(self)), the draft's weighted mean of the round trips, with TM the mean of the fastest
// 95%; done when 4 successive values are saturated the same way, or at the time limit.
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import https from 'node:https';
import { connect as tlsConnect } from 'node:tls';

export interface ReferenceResult {
  rpm: number;
  goodputMbps: number;
  connections: number;
}

interface Config {
  small: string;
  large: string;
  upload: string;
}

async function readConfig(url: string, trust: Buffer): Promise<Config> {
  const text = await new Promise<string>((resolve, reject) => {
    https.get(url, { ca: trust }, (res) => {
      let t = '';
      res.on('data', (d: Buffer) => (t += d.toString()));
      res.on('end', () => {
        resolve(t);
      });
    }).on('error', reject);
  });
  const body = JSON.parse(text) as { version: number; urls: Record<string, string | undefined> };
  if (body.version !== 1) throw new Error(`configuration version ${String(body.version)}`);
  const u = body.urls;
  const small = u.small_download_url ?? u.small_https_download_url;
  const large = u.large_download_url ?? u.large_https_download_url;
  const upload = u.upload_url ?? u.https_upload_url;
  if (small === undefined || large === undefined || upload === undefined) throw new Error('configuration without its three URLs');
  return { small, large, upload };
}

/** The mean of the fastest 95% of `xs`. */
function tm(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const keep = s.slice(0, Math.max(1, Math.floor(s.length * 0.95)));
  return keep.reduce((a, b) => a + b, 0) / keep.length;
}

function sd(xs: number[]): number {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return Math.sqrt(xs.reduce((a, b) => a + (b - m) * (b - m), 0) / xs.length);
}

/** Saturated: the last four values' standard deviation under 5% of the last. */
const isSaturated = (series: number[]) => series.length >= 4 && sd(series.slice(-4)) < 0.05 * (series.at(-1) ?? 0);

/** A GET on `session`, resolved when its body has ended, in ms. */
function timedGet(session: ClientHttp2Session, url: URL): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = session.request({ ':path': url.pathname, 'accept-encoding': 'identity' });
    req.on('data', () => undefined);
    req.on('end', () => {
      resolve(performance.now() - t0);
    });
    req.on('error', reject);
  });
}

/** A foreign probe: [TCP, TLS, HTTP] ms, on a connection made for it and closed after. */
function foreignProbe(url: URL, trust: Buffer): Promise<[number, number, number]> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let tcp = 0;
    const socket = tlsConnect({ host: url.hostname, port: Number(url.port || 443), ALPNProtocols: ['h2'], ca: trust, servername: /^[\d.]+$/.test(url.hostname) ? '' : url.hostname });
    socket.once('connect', () => (tcp = performance.now() - t0));
    socket.once('error', reject);
    socket.once('secureConnect', () => {
      const tls = performance.now() - t0 - tcp;
      const session = http2Connect(url.origin, { createConnection: () => socket });
      session.on('error', reject);
      timedGet(session, url).then(
        (http) => {
          session.destroy();
          resolve([tcp, tls, http]);
        },
        (err: unknown) => {
          session.destroy();
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  });
}

/** Runs one direction and returns its responsiveness and goodput. */
async function direction(config: Config, kind: 'download' | 'upload', trust: Buffer, limitMs: number): Promise<ReferenceResult> {
  const origin = new URL(config.large).origin;
  const sessions: ClientHttp2Session[] = [];
  let bytes = 0;
  const chunk = Buffer.alloc(32 * 1024);
  const addConnection = () => {
    const s = http2Connect(origin, { ca: trust, settings: { initialWindowSize: 4 * 1024 * 1024 } });
    s.on('error', () => undefined);
    s.on('connect', () => {
      s.setLocalWindowSize(16 * 1024 * 1024);
    });
    sessions.push(s);
    if (kind === 'download') {
      const req = s.request({ ':path': new URL(config.large).pathname, 'accept-encoding': 'identity' });
      req.on('data', (d: Buffer) => (bytes += d.length));
      req.on('error', () => undefined);
    } else {
      const req = s.request({ ':method': 'POST', ':path': new URL(config.upload).pathname, 'content-type': 'application/octet-stream' });
      req.on('error', () => undefined);
      const write = () => {
        while (!req.destroyed && req.write(chunk)) bytes += chunk.length;
        if (!req.destroyed) {
          bytes += chunk.length;
          req.once('drain', write);
        }
      };
      write();
    }
  };
  const small = new URL(config.small);
  const perInterval: { tcp: number[]; tls: number[]; http: number[]; self: number[] }[] = [];
  const goodputs: number[] = [];
  const movingAvgs: number[] = [];
  const rpms: number[] = [];
  let probing: NodeJS.Timeout | undefined;
  const start = performance.now();
  addConnection();
  let last = 0;
  try {
    while (performance.now() - start < limitMs) {
      const bucket = { tcp: [] as number[], tls: [] as number[], http: [] as number[], self: [] as number[] };
      perInterval.push(bucket);
      await new Promise((r) => setTimeout(r, 1000));
      goodputs.push(((bytes - last) * 8) / 1e6);
      last = bytes;
      if (goodputs.length >= 4) movingAvgs.push(goodputs.slice(-4).reduce((a, b) => a + b, 0) / 4);
      const goodputDone = isSaturated(movingAvgs);
      if (!goodputDone && sessions.length < 16) addConnection();
      if ((goodputDone || performance.now() - start > limitMs / 2) && probing === undefined) {
        probing = setInterval(() => {
          const into = perInterval.at(-1);
          if (into === undefined) return;
          foreignProbe(small, trust).then(([a, b, c]) => {
            into.tcp.push(a);
            into.tls.push(b);
            into.http.push(c);
          }, () => undefined);
          const s = sessions[Math.floor(Math.random() * sessions.length)];
          if (s !== undefined) timedGet(s, small).then((ms) => into.self.push(ms), () => undefined);
        }, 100);
      }
      if (probing !== undefined) {
        const recent = perInterval.slice(-5, -1);
        const all = { tcp: recent.flatMap((b) => b.tcp), tls: recent.flatMap((b) => b.tls), http: recent.flatMap((b) => b.http), self: recent.flatMap((b) => b.self) };
        if (all.tcp.length > 0 && all.self.length > 0) {
          rpms.push(60000 / ((tm(all.tcp) + tm(all.tls) + tm(all.http)) / 6 + tm(all.self) / 2));
          if (goodputDone && isSaturated(rpms)) break;
        }
      }
    }
  } finally {
    if (probing !== undefined) clearInterval(probing);
    for (const s of sessions) s.destroy();
  }
  if (rpms.length === 0) throw new Error(`the ${kind} direction took no probes`);
  return { rpm: rpms.at(-1) ?? 0, goodputMbps: movingAvgs.at(-1) ?? goodputs.at(-1) ?? 0, connections: sessions.length };
}

/** Both directions against the configuration at `configUrl`, trusting `trust` (PEM) for TLS. */
export async function referenceRpm(configUrl: string, trust: Buffer, limitMs = 20_000): Promise<{ download: ReferenceResult; upload: ReferenceResult }> {
  const config = await readConfig(configUrl, trust);
  const download = await direction(config, 'download', trust, limitMs);
  const upload = await direction(config, 'upload', trust, limitMs);
  return { download, upload };
}
