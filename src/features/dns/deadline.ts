/**
 * A lookup's deadline: one timer, cleared when the lookup ends, and the few listeners that end
 * an exchange when it fires. It stands where an AbortSignal would: Node builds an EventTarget for
 * every AbortController, which cost about 4% of /v1/ip's CPU for a new caller (measured with
 * --cpu-prof under `npm run bench`'s load), and only DNS over HTTPS needs a real signal (fetch
 * takes one), so that is made on demand.
 */
export class Deadline {
  #expired = false;
  #listeners: (() => void)[] = [];
  #controller: AbortController | undefined;
  readonly #timer: ReturnType<typeof setTimeout>;

  constructor(ms: number) {
    this.#timer = setTimeout(() => {
      this.#expire();
    }, ms);
  }

  get expired(): boolean {
    return this.#expired;
  }

  /** Calls `listener` once when the deadline passes; the function returned forgets it. */
  onExpire(listener: () => void): () => void {
    this.#listeners.push(listener);
    return () => {
      const at = this.#listeners.indexOf(listener);
      if (at >= 0) this.#listeners.splice(at, 1);
    };
  }

  /** An AbortSignal that aborts with the deadline, for APIs that take one (fetch). */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#expired) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  /** Ends the timer: the lookup is over, whatever ended it. */
  clear(): void {
    clearTimeout(this.#timer);
  }

  #expire(): void {
    this.#expired = true;
    this.#controller?.abort();
    const listeners = this.#listeners;
    this.#listeners = [];
    for (const listener of listeners) listener();
  }
}
