/**
 * OpenClaw's own measure of a request before it sends it to a local or proxy-like endpoint: characters / 4, with a
 * 25% safety margin (specs/011-budget-safe-context.md, "Small windows"). Whatever LCM sizes against a window in characters (an
 * exploration request, a recall tool's result) uses it, so the host's check agrees with LCM's.
 */
export const HOST_CHARS_PER_TOKEN = 3.2;
