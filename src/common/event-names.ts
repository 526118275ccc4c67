// src/common/: rules the clients (the page, the command line's client code) share with the server;
// besides the contract's generated types, the one part of src/ a client may import; it imports nothing else.

/** The analytics event names (the API contract). */
export const EVENT_NAMES = ['speed_test_started', 'speed_test_completed', 'speed_test_failed', 'speed_test_shared'] as const;
export type EventName = (typeof EVENT_NAMES)[number];
