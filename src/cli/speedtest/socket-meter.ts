// The bytes a test's connections carried each way, counted at their sockets (net.Socket's
// bytesRead and bytesWritten): every request and response whole, headers included, of every
// exchange the test made (round trips, bursts, warm-up, measured windows, a direction measured
// again after a 429). A data cap counts all of it, not only the window a rate was taken over.
import type { Socket } from 'node:net';

/** Bytes from the server (down) and to it (up). */
export interface BytesMoved {
  down: number;
  up: number;
}

export class SocketMeter {
  /** Sockets still open: counted as they stand when asked. */
  readonly #open = new Set<Socket>();
  /** Sockets closed, counted once at their close and let go (an RPM test opens hundreds). */
  readonly #closed: BytesMoved = { down: 0, up: 0 };

  /** Counts `socket` from now to its close; a socket seen again (a kept-alive connection's next request) is counted once. */
  track(socket: Socket): void {
    if (this.#open.has(socket)) return;
    this.#open.add(socket);
    socket.once('close', () => {
      if (!this.#open.delete(socket)) return;
      this.#closed.down += socket.bytesRead;
      this.#closed.up += socket.bytesWritten;
    });
  }

  /** What every socket tracked has carried so far. */
  moved(): BytesMoved {
    let { down, up } = this.#closed;
    for (const socket of this.#open) {
      down += socket.bytesRead;
      up += socket.bytesWritten;
    }
    return { down, up };
  }
}
