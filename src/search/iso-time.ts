/**
 * How recall results and the operator's listings show times: ISO 8601 in UTC, the one format every model and script
 * reads unambiguously. Stored times are epoch milliseconds; a value that is not a valid time is shown as the number
 * rather than thrown on.
 */

export function isoTime(millis: number): string {
  const date = new Date(millis);
  return Number.isNaN(date.getTime()) ? String(millis) : date.toISOString();
}

/** An ISO time without milliseconds, or "never" (the CLI's listings and `lcm_conversations`). */
export function isoOrNever(millis: number | null): string {
  return millis === null ? "never" : new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z");
}
