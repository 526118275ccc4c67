// src/common/: rules the clients (the page, the command line's client code) share with the server;
// besides the contract's generated types, the one part of src/ a client may import; it imports nothing else.

/**
 * An origin named by an IPv6 address (`http://[2001:db8::1]:8080`). A Content-Security-Policy
 * cannot name one: CSP3's host-source grammar has no brackets, and Chromium drops such a source
 * as invalid. The page's policy leaves these out and the page says why it cannot ask them.
 */
export const isIpv6LiteralOrigin = (origin: string): boolean => /^[a-z][a-z0-9+.-]*:\/\/\[/i.test(origin);
