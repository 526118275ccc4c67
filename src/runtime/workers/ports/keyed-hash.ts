/**
 * HMAC-SHA-256 of a source under the deployment's secret, with WebCrypto, the only HMAC every
 * Workers isolate has without a compatibility flag. Asynchronous: the app awaits it only on the
 * limited routes, which await their store anyway. The key is imported once per isolate; the
 * output is base64url, as Node's keyed hash (src/runtime/node/ports/limiter-store/limiter.ts).
 */
export function webCryptoHasher(secret: string): (input: string) => Promise<string> {
  const encoder = new TextEncoder();
  const key = crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return async (input) => {
    const mac = new Uint8Array(await crypto.subtle.sign('HMAC', await key, encoder.encode(input)));
    let binary = '';
    for (const byte of mac) binary += String.fromCharCode(byte);
    return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
  };
}
