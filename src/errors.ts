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

/** A bad parameter of a tool or command: `Parameter "<parameter>" <problem>.`, with the parameter in the details. */
export function invalidParameter(parameter: string, problem: string): LcmError {
  return new LcmError("invalid_input", `Parameter "${parameter}" ${problem}.`, { parameter });
}

/** Contract: never throws, whatever `value` is (a Proxy whose traps throw is simply not an LcmError). */
export function isLcmError(value: unknown, code?: LcmErrorCode): value is LcmError {
  try {
    return value instanceof LcmError && (code === undefined || value.code === code);
  } catch {
    // `instanceof` ran a hostile getPrototypeOf trap: whatever it is, it is not one of ours.
    return false;
  }
}

/** What describeError says about a thrown value that cannot be read (its name, message or conversion throws). */
export const UNDESCRIBABLE_ERROR = "an error that could not be described (reading its name or message threw)";

/**
 * A short, single-line description of any thrown value, for logs and truthful hook results. Contract: never
 * throws. Hooks and tools call it inside their catch blocks, so a throwing getter (a Proxy, a host object
 * rejected by `runtimeContext.llm`) must not escape from there: anything unreadable gets UNDESCRIBABLE_ERROR.
 */
export function describeError(error: unknown): string {
  try {
    if (error instanceof Error) {
      const name = String(error.name);
      return `${name === "Error" ? "" : `${name}: `}${String(error.message)}`;
    }
    return String(error);
  } catch {
    // A getter, trap or toString of the thrown value threw: say so instead of throwing from a catch block.
    return UNDESCRIBABLE_ERROR;
  }
}
