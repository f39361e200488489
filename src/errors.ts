/**
 * The one error type of the plugin. `code` says what kind of failure it is so callers decide on data, not on
 * message text; the message says what happened, what was expected and what to do.
 */
export type LcmErrorCode =
  | "invalid_config"
  | "invalid_input"
  | "invalid_message"
  | "not_found"
  | "forbidden"
  | "busy"
  | "aborted"
  | "timeout"
  | "storage"
  | "summarizer"
  | "unavailable";

export class LcmError extends Error {
  override readonly name = "LcmError";
  constructor(
    readonly code: LcmErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isLcmError(value: unknown, code?: LcmErrorCode): value is LcmError {
  return value instanceof LcmError && (code === undefined || value.code === code);
}

/** A short, single-line description of any thrown value, for logs and truthful hook results. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name === "Error" ? "" : `${error.name}: `}${error.message}`;
  return String(error);
}
