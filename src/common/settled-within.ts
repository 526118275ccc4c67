// src/common/: rules the clients (the page, the command line's client code) share with the server;
// besides the contract's generated types, the one part of src/ a client may import; it imports nothing else.
// Waiting for work with a bound: the speed test's clients (the page and the command line) give the
// uploads in flight at a direction's end a grace to be answered (UPLOAD_ANSWER_GRACE_MS).

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
