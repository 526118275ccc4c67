// What a client supplies the speed test's load loop (load-loop.ts): the few HTTP exchanges a
// direction is made of, against a deployment's /__down and /__up, each timed as that client
// can time it. The page's is over fetch (web/speedtest/fetch-transport.ts), the command line's
// over node:http (src/cli/speedtest/http-transport.ts); load-transport.conformance.ts holds both
// to the same cases.
import type { BodyTiming } from './server-timing.js';

/** The way a direction loads the link. */
export type LoadDirection = 'download' | 'upload';

/** What a round trip is marked as on the server: taken on the quiet link, or beside a direction's load. */
export type RoundTripMark = LoadDirection | 'idle';

/** A request the server's rate limit refused (429), with the wait it asked for (undefined: none given). */
export class LoadRefused extends Error {
  constructor(
    message: string,
    readonly retryAfterS: number | undefined,
  ) {
    super(message);
  }
}

/** A round trip as the client timed it: when its request was sent (performance.now()) and how long it took, ms. */
export interface TimedRoundTrip {
  sentAt: number;
  ms: number;
}

/**
 * A client's exchanges with the server. Each settles once; once its `signal` is aborted it settles
 * promptly, resolved or rejected (the loop reads nothing of it then). A 429 rejects with
 * LoadRefused; any other failure with the client's own error, its message naming what failed.
 */
export interface LoadTransport {
  /** One download of `bytes`, each chunk's size given to `onBytes` as it arrives; settles when its body has ended. */
  download(bytes: number, onBytes: (bytes: number) => void, signal: AbortSignal): Promise<void>;
  /**
   * Makes the upload bodies of up to `bytes` before a direction's clock starts: a body made
   * inside it is time the direction spends sending nothing.
   */
  prepareUploads(bytes: number): void;
  /** One upload of `bytes` (at most what prepareUploads made); resolves, once answered, with how its body arrived, as the server said. */
  upload(bytes: number, signal: AbortSignal): Promise<BodyTiming | undefined>;
  /** One round trip (an empty download marked `mark`, the `n`th of its kind), less the server's own time. */
  roundTrip(mark: RoundTripMark, n: number, signal: AbortSignal): Promise<TimedRoundTrip>;
}
