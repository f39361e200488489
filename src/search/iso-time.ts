/**
 * How recall results show times: ISO 8601 in UTC, the one format every model reads unambiguously. Stored times
 * are epoch milliseconds; a value that is not a valid time is shown as the number rather than thrown on.
 */

export function isoTime(millis: number): string {
  const date = new Date(millis);
  return Number.isNaN(date.getTime()) ? String(millis) : date.toISOString();
}
