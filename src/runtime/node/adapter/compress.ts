// The page's HTML compressed per request (src/features/page.ts): Brotli at quality 5 and gzip at
// level 6, the speed/size middle that web servers default to for responses made on the fly
// (best-quality Brotli is for files compressed once, at build). About 15 kB of HTML becomes
// about 4 kB in a fraction of a millisecond.
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { TextCompressor } from '../../../core/http/static-asset.js';

export const nodeCompress: TextCompressor = (text, coding) => {
  const input = Buffer.from(text, 'utf8');
  return coding === 'br'
    ? brotliCompressSync(input, { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_SIZE_HINT]: input.length } })
    : gzipSync(input, { level: 6 });
};
