// Runs in every Node test file's context (vitest.config.ts, setupFiles).
import { afterAll } from 'vitest';
import { removeCertificates } from './doh-relay.js';

// Keys and certificates made for the file's servers are not left in /tmp.
afterAll(removeCertificates);
