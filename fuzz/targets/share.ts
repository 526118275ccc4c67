// Fuzz target: a share link's fragment (decodeResult, src/common/speedtest/share.ts), text anyone
// can put in a link. Its contract: a total function, `{ ok: false, reason }` for anything that
// is not a version 1 result within the codec's bounds, and a result that encodeResult writes
// back to a fragment reading as the same result.
import { decodeResult, encodeResult } from '../../src/common/speedtest/share.js';
import { check, json, total } from '../invariant.js';
import { checkSharedResult } from '../shared-result.js';

export function fuzz(data: Buffer): void {
  // The page reads the fragment as text (location.hash); a link may carry any characters.
  const text = data.toString('utf8');
  const decoded = total('share/never-throws', () => decodeResult(text));
  if (!decoded.ok) {
    check(typeof decoded.reason === 'string' && decoded.reason !== '', 'share/refusal-says-why', () => JSON.stringify(decoded));
    return;
  }
  const { result } = decoded;
  checkSharedResult(result, 'share/result-in-bounds', () => `${JSON.stringify(text)} gave ${json(result)}`);
  // Round trip: the result written as a fragment reads back the same.
  const fragment = encodeResult(result);
  const again = decodeResult(fragment);
  check(again.ok && json(again.result) === json(result), 'share/round-trip', () => `${json(result)} wrote ${fragment}, which reads ${json(again)}`);
}
