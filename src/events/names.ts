/** The analytics event names (spec §6). */
export const EVENT_NAMES = ['speed_test_started', 'speed_test_completed', 'speed_test_failed', 'speed_test_shared'] as const;
export type EventName = (typeof EVENT_NAMES)[number];
