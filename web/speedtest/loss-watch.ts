// The browser's own account of the packet-loss step. The speed-test library (@cloudflare/speedtest) opens its
// two peer connections itself (a sender and a receiver, both through the TURN server) and counts
// messages, not datagrams: a browser that falls behind the step's pace packs many messages into
// one datagram, and then one datagram lost on the network loses them all (the count read 17-45%
// where the network lost 10%). The page has no handle on the speed-test library's connections, so while the
// step may run it stands in for window.RTCPeerConnection (the speed-test library looks the global up when it
// creates them) with a subclass that reads getStats() of both at the step's two ends: when the
// sending channel opens (the speed-test library's open handler, which starts the step, waits for the reading)
// and when the speed-test library closes them (its count is final then; their native close waits for the
// reading). The datagrams the sender's DTLS transport sent over the step less those the
// receiver's received are the network's loss, however the messages were packed
// (RTCTransportStats packetsSent, packetsReceived: W3C webrtc-stats §7.13; DTLS records, one to a
// datagram, not the STUN checks beside them). At each send it also notes how many messages the
// channel still holds: where a browser gives no such counts, the speed-test library's count stands only when
// it sent one message to a datagram (lossUntrusted, result-text.ts).
import type { LossSending } from './result-text.js';

/** The longest the step's end waits for getStats(): past it the counts are unknown, never made up. */
const STATS_WAIT_MS = 2000;

export interface LossWatch {
  /** What was seen, once the speed-test library has closed its connections (or the wait for them ended). */
  sending(): Promise<LossSending>;
  /** Puts the browser's own RTCPeerConnection back. */
  stop(): void;
}

interface Counts {
  sent: number;
  received: number;
}

/** Datagrams a connection's DTLS transports sent and received so far; undefined when the browser does not say. */
async function transportCounts(pc: RTCPeerConnection): Promise<Counts | undefined> {
  const report = await pc.getStats();
  let counts: Counts | undefined;
  report.forEach((s: { type?: string; packetsSent?: number; packetsReceived?: number }) => {
    if (s.type !== 'transport' || typeof s.packetsSent !== 'number' || typeof s.packetsReceived !== 'number') return;
    counts = { sent: (counts?.sent ?? 0) + s.packetsSent, received: (counts?.received ?? 0) + s.packetsReceived };
  });
  return counts;
}

/** Both connections' counts at one moment: the sender's first, the receiver's second. */
function bothCounts(pair: readonly [RTCPeerConnection, RTCPeerConnection]): Promise<readonly [Counts, Counts] | undefined> {
  const read = Promise.all(pair.map(transportCounts)).then(
    ([a, b]) => (a === undefined || b === undefined ? undefined : ([a, b] as const)),
    () => undefined,
  );
  const late = new Promise<undefined>((resolve) => setTimeout(resolve, STATS_WAIT_MS));
  return Promise.race([read, late]);
}

export function watchLossStep(): LossWatch {
  const native = window.RTCPeerConnection;
  const encoder = new TextEncoder();
  /** Sizes in bytes of the messages sent, in order: bufferedAmount counts bytes, the rule messages. */
  const sizes: number[] = [];
  let maxWaiting = 0;
  /** The connections made while the step may run, in order: the speed-test library makes its sender, then its receiver. */
  const made: RTCPeerConnection[] = [];
  let pair: readonly [RTCPeerConnection, RTCPeerConnection] | undefined;
  /** Both counts as the step starts, read when the sending channel opens. */
  let start: Promise<readonly [Counts, Counts] | undefined> | undefined;
  /** Both counts as the step ends, read at the speed-test library's first close of the pair. */
  let end: Promise<readonly [Counts, Counts] | undefined> | undefined;

  /**
   * The speed-test library closes its channels right after its connections; a channel's close sends SCTP's
   * stream reset (RFC 8831 §6.7), which the end reading must not count (the likely cause of 1 of
   * 1002 read lost with nothing dropped, once in six runs). Held, like the connections' close,
   * until the reading is in.
   */
  const holdClose = (channel: RTCDataChannel) => {
    const close = channel.close.bind(channel);
    channel.close = () => {
      void (end ?? Promise.resolve()).then(close);
    };
  };

  class Watched extends native {
    constructor(config?: RTCConfiguration) {
      super(config);
      made.push(this);
      // The receiver's channel, before the speed-test library's own handler keeps it (this listener is first).
      this.addEventListener('datachannel', (ev) => {
        holdClose(ev.channel);
      });
    }

    override createDataChannel(label: string, init?: RTCDataChannelInit): RTCDataChannel {
      const channel = super.createDataChannel(label, init);
      // The speed-test library's sender: the first channel created while the step may run. Its receiver's
      // channel arrives by ondatachannel and sends nothing.
      if (pair !== undefined) return channel;
      const receiver = made.filter((pc) => pc !== this).at(-1);
      if (receiver === undefined) return channel;
      const both = [this, receiver] as const;
      pair = both;
      // The speed-test library starts the step in its onopen handler: it is held here and called once both
      // connections' counts are read, so the first count has none of the step's datagrams in it
      // (read beside the first sends, under load it held 10 of them, and the loss read low).
      let libraryOpen: ((this: RTCDataChannel, ev: Event) => unknown) | null = null;
      Object.defineProperty(channel, 'onopen', {
        configurable: true,
        get: () => libraryOpen,
        set: (handler: typeof libraryOpen) => {
          libraryOpen = handler;
        },
      });
      channel.addEventListener('open', (ev) => {
        const counted = bothCounts(both);
        start = counted;
        void counted.then(() => libraryOpen?.call(channel, ev));
      });
      holdClose(channel);
      const send = channel.send.bind(channel) as (data: string) => void;
      channel.send = ((data: string) => {
        // The messages still in the browser: the most recent ones whose bytes make up bufferedAmount.
        let bytes = channel.bufferedAmount;
        let waiting = 0;
        for (let i = sizes.length - 1; i >= 0 && bytes > 0; i--, waiting++) bytes -= sizes[i] ?? 0;
        maxWaiting = Math.max(maxWaiting, waiting);
        sizes.push(encoder.encode(data).length);
        send(data);
      }) as RTCDataChannel['send'];
      return channel;
    }

    override close(): void {
      if (pair === undefined || !pair.includes(this)) {
        super.close();
        return;
      }
      // The speed-test library closes its sender and then its receiver in one go, its count final: both are
      // read once, at the first close, and each closes once the reading is in.
      end ??= start === undefined ? Promise.resolve(undefined) : bothCounts(pair);
      void end.then(() => {
        super.close();
      });
    }
  }
  window.RTCPeerConnection = Watched;

  return {
    sending: async () => {
      // The speed-test library closes its connections before it finishes, so the end reading has begun by
      // now; one that never opened its channel has nothing to read.
      const [from, to] = [await start, await end];
      const over = from !== undefined && to !== undefined ? { sent: to[0].sent - from[0].sent, received: to[1].received - from[1].received } : undefined;
      return { messages: sizes.length, maxWaiting, datagrams: over?.sent, received: over?.received };
    },
    stop: () => {
      window.RTCPeerConnection = native;
    },
  };
}
