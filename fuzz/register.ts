// `node --import ./fuzz/register.ts`: installs resolve-ts.ts before the entry module loads.
import { register } from 'node:module';

register('./resolve-ts.ts', import.meta.url);
