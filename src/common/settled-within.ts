// src/common/: rules the clients (the page, the command line's client code) share with the server;
// besides the contract's generated types, the one part of src/ a client may import; it imports nothing else.
// Waiting with a bound: the speed test's clients (the page and the command line) give the uploads in
// flight at a direction's end a grace to be answered (UPLOAD_ANSWER_GRACE_MS), and their loops pause
// between round trips and intervals, each wait ended at once by a stop.

/** Resolves once `work` settles, `ms` have passed or `signal` is aborted, whichever is first; its timer never outlives the wait. */
export function settledWithin(work: Promise<unknown>, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    if (signal.aborted) done();
    else signal.addEventListener('abort', done);
    void work.then(done, done);
  });
}

/**
 * Resolves after `ms`, or at once when `signal` aborts. Its listener goes when it ends: a run's one
 * signal pauses many times, and listeners left on it pile up past Node's ten.
 */
export const pause = (ms: number, signal: AbortSignal): Promise<void> => settledWithin(new Promise(() => undefined), ms, signal);
