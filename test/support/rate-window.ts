// Uses up most of this source's speed-test window on a server, so that the client run next meets
// the limit at once, whatever this machine's speed makes a test cost: it then waits the rest of
// the window (Retry-After) and has a whole fresh one for the rest of its test, so it waits once.
import { Agent, get } from 'node:http';

/** Sends `count` empty downloads to `base` (http://127.0.0.1:port) from loopback, 16 at a time; each must be answered 200. */
export async function spendSpeedtestWindow(base: string, count: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  let sent = 0;
  const one = () =>
    new Promise<number>((resolve, reject) => {
      get(`${base}/__down?bytes=0`, { agent }, (res) => {
        res.resume();
        res.on('end', () => {
          resolve(res.statusCode ?? 0);
        });
      }).on('error', reject);
    });
  const worker = async () => {
    while (sent < count) {
      sent++;
      const status = await one();
      if (status !== 200) throw new Error(`spending the window: /__down answered ${String(status)} after ${String(sent)} requests`);
    }
  };
  try {
    await Promise.all(Array.from({ length: 16 }, worker));
  } finally {
    agent.destroy();
  }
}
