// Header values shared by every response (docs/api.md, "Behaviour notes").

/** Browser clients may read these (CORS, Fetch standard §3.2.6). */
export const EXPOSED_HEADERS = 'X-Request-ID, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After';

/** Request headers a preflight may ask for. */
export const ALLOWED_REQUEST_HEADERS = 'Content-Type, Accept';

/** How long a browser may cache a preflight answer, in seconds. */
export const PREFLIGHT_MAX_AGE = '86400';

/** Cache-Control values by route (docs/api.md, "Behaviour notes"). */
export const CACHE = {
  noStore: 'no-store',
  /** Kept, but asked again each time (the client package: a new build replaces it at the same path). */
  noCache: 'no-cache',
  regions: 'public, max-age=300',
  configuration: 'public, max-age=3600',
  health: 'public, max-age=30',
  openapi: 'public, max-age=300',
  families: 'public, max-age=300',
  servers: 'public, max-age=300',
} as const;
