// The bytes of the speed test's transfers as they move, for the live rate. The engine times each
// transfer from Resource Timing when it ends and says nothing until then, and it takes no fetch of
// ours, so its requests to /__down and /__up are routed through here while a test runs: a
// download's body is counted as it streams through, and an upload is sent with XMLHttpRequest,
// whose upload progress events fetch does not have. Both still make one request of the same URL,
// so the engine's Resource Timing entries, and with them every figure, stay what they were; the
// live rate only shows what is moving, it decides nothing.
//
// One thing more: the engine times every request by the newest Resource Timing entry of its URL,
// read once the body is read, and clears the whole timeline each time its transfers move to the
// next size, while its loaded-latency requests run beside them. An entry recorded and cleared
// before the engine read it made the read `undefined` ("Cannot read properties of undefined
// (reading 'transferSize')"), the request failed, and one test in three on a 20 Mbit/s link ended
// as "Connection failed". While a test runs, clearing is held off here (the engine raises the
// timeline's buffer to 10,000 entries, far more than a test makes); it is cleared once at the end.

export type Direction = 'download' | 'upload';
export type OnBytes = (direction: Direction, bytes: number) => void;

const urlOf = (input: RequestInfo | URL): URL => new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url, location.href);

/** A download's response with its body counted chunk by chunk as the engine reads it. */
function counted(response: Response, onBytes: OnBytes): Response {
  if (response.body === null) return response;
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        onBytes('download', chunk.byteLength);
        controller.enqueue(chunk);
      },
    }),
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** The response headers XMLHttpRequest gives as one string, as a Headers. */
function headersOf(raw: string): Headers {
  const headers = new Headers();
  for (const line of raw.trim().split(/[\r\n]+/)) {
    const at = line.indexOf(':');
    if (at > 0) headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  return headers;
}

/** An upload as fetch would send it, through XMLHttpRequest, its progress counted. */
function upload(url: string, init: RequestInit, onBytes: OnBytes): Promise<Response> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    new Headers(init.headers).forEach((value, name) => {
      xhr.setRequestHeader(name, value);
    });
    let sent = 0;
    xhr.upload.onprogress = (event) => {
      onBytes('upload', event.loaded - sent);
      sent = event.loaded;
    };
    xhr.onload = () => {
      // A null-body status (204, 205, 304) may carry no body in a Response.
      const body = [204, 205, 304].includes(xhr.status) ? null : xhr.responseText;
      resolve(new Response(body, { status: xhr.status, statusText: xhr.statusText, headers: headersOf(xhr.getAllResponseHeaders()) }));
    };
    // As fetch fails: a TypeError for the network, an AbortError for an abort.
    xhr.onerror = () => {
      reject(new TypeError('Failed to fetch'));
    };
    xhr.onabort = () => {
      reject(new DOMException('The operation was aborted.', 'AbortError'));
    };
    const signal = init.signal;
    if (signal?.aborted === true) {
      reject(new DOMException('The operation was aborted.', 'AbortError'));
      return;
    }
    signal?.addEventListener('abort', () => {
      xhr.abort();
    });
    xhr.send(init.body as XMLHttpRequestBodyInit | null | undefined);
  });
}

/**
 * Routes the page's requests to the speed-test targets through the counters until the returned
 * function is called; every other request goes to fetch untouched.
 */
export function countTransfers(onBytes: OnBytes): () => void {
  const original = window.fetch.bind(window);
  // eslint-disable-next-line @typescript-eslint/unbound-method -- kept only to be put back as it was
  const installed = window.fetch;
  const routed = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = urlOf(input);
    if (url.pathname === '/__down') return counted(await original(input, init), onBytes);
    if (url.pathname === '/__up' && init?.method === 'POST' && typeof input === 'string') return upload(url.href, init, onBytes);
    return original(input, init);
  };
  window.fetch = routed;
  const clear = performance.clearResourceTimings.bind(performance);
  const held = () => undefined;
  performance.clearResourceTimings = held;
  return () => {
    // Only if nothing replaced them since: never undo someone else's.
    if (window.fetch === routed) window.fetch = installed;
    if (performance.clearResourceTimings === held) {
      performance.clearResourceTimings = clear;
      clear();
    }
  };
}
