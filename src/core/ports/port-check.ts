// The port check port (`GET /port/N`): a TCP connection to the caller's own address, or why this
// server makes none. Its conformance suite is port-check.conformance.ts beside it; every
// implementation runs it.
import type { ParsedAddress } from '../net/address.js';

/**
 * Whether a TCP connection to `port` at `address` is accepted within the runtime's timeout, and
 * whether an address is one of the host's own; or why this server makes none (turned off, or a
 * runtime that does not connect to callers).
 */
export type PortCheck = { reach(address: ParsedAddress, port: number): Promise<boolean>; isOwnAddress(address: ParsedAddress): boolean } | { unavailable: string };

/** What a server that was not given a port check says: the operator's switch. */
export const PORT_CHECK_OFF: PortCheck = { unavailable: 'The port check is off on this server; its operator turns it on with NETDIAG_PORT_CHECK=on.' };
