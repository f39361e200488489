/**
 * Reads a tool's arguments with errors that name the parameter, say what was expected and what arrived. The
 * host validates against the schema too, but not every host does, and a model that sends `limit: "20"` or a
 * misspelled key should get a message it can act on. Numeric and boolean strings are accepted leniently.
 */
import { describeError, invalidParameter, isLcmError, LcmError } from "../errors.js";

export class ToolParams {
  private readonly values: Record<string, unknown>;

  constructor(raw: unknown, known: readonly string[]) {
    this.values = readArguments(raw, known);
  }

  has(name: string): boolean {
    return this.values[name] !== undefined && this.values[name] !== null;
  }

  string(name: string, options: { required: true; maxLength: number }): string;
  string(name: string, options: { required?: false; maxLength: number }): string | undefined;
  string(name: string, options: { required?: boolean; maxLength: number }): string | undefined {
    const value = this.values[name];
    if (value === undefined || value === null || value === "") {
      if (options.required) throw invalidParameter(name, "is required");
      return undefined;
    }
    if (typeof value !== "string") throw invalidParameter(name, `must be a string, got ${describe(value)}`);
    if (value.trim() === "" && options.required) throw invalidParameter(name, "must not be blank");
    if (value.length > options.maxLength) throw invalidParameter(name, `is ${value.length} characters long; the limit is ${options.maxLength}`);
    return value;
  }

  integer(name: string, range: { min: number; max: number }): number | undefined {
    const value = this.values[name];
    if (value === undefined || value === null || value === "") return undefined;
    const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
    if (typeof number !== "number" || !Number.isInteger(number) || number < range.min || number > range.max) {
      throw invalidParameter(name, `must be an integer from ${range.min} to ${range.max}, got ${describe(value)}`);
    }
    return number;
  }

  boolean(name: string): boolean | undefined {
    const value = this.values[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value === "boolean") return value;
    if (value === "true" || value === "false") return value === "true";
    throw invalidParameter(name, `must be true or false, got ${describe(value)}`);
  }

  choice<T extends string>(name: string, choices: readonly T[], fallback: T): T {
    const value = this.values[name];
    if (value === undefined || value === null || value === "") return fallback;
    if (typeof value !== "string" || !choices.includes(value as T)) {
      throw invalidParameter(name, `must be one of ${choices.map((choice) => `"${choice}"`).join(", ")}, got ${describe(value)}`);
    }
    return value as T;
  }

  /** An ISO 8601 date or date-time (`2026-02-19` or `2026-02-19T08:00:00Z`) as milliseconds, or null. */
  time(name: string): number | null {
    const value = this.string(name, { maxLength: 64 });
    if (value === undefined) return null;
    const millis = /^\d{4}-\d{2}-\d{2}/.test(value.trim()) ? Date.parse(value.trim()) : Number.NaN;
    if (Number.isNaN(millis)) {
      throw invalidParameter(name, `must be an ISO 8601 time such as "2026-02-19" or "2026-02-19T08:00:00Z", got ${describe(value)}`);
    }
    return millis;
  }

  stringList(name: string, options: { maxItems: number; maxLength: number }): string[] | undefined {
    const value = this.values[name];
    if (value === undefined || value === null) return undefined;
    const list = typeof value === "string" ? [value] : value;
    if (!Array.isArray(list) || list.some((item) => typeof item !== "string" || item.length > options.maxLength)) {
      throw invalidParameter(name, `must be an array of strings, got ${describe(value)}`);
    }
    if (list.length === 0) return undefined;
    if (list.length > options.maxItems) throw invalidParameter(name, `holds ${list.length} items; the limit is ${options.maxItems}`);
    return list as string[];
  }
}

/**
 * The arguments as a plain copy of the known parameters, read once: a getter or Proxy trap in what the host
 * passed runs here, and a throw becomes an invalid_input error naming the problem, never an internal failure.
 */
function readArguments(raw: unknown, known: readonly string[]): Record<string, unknown> {
  const expected = `an object with the parameters ${known.join(", ")}`;
  try {
    const values = raw === undefined || raw === null ? {} : raw;
    if (typeof values !== "object" || Array.isArray(values)) throw new LcmError("invalid_input", `Arguments must be ${expected}.`);
    for (const key of Object.keys(values)) {
      if (!known.includes(key)) throw invalidParameter(key, `is not a parameter of this tool; known parameters: ${known.join(", ")}`);
    }
    const copy: Record<string, unknown> = {};
    for (const key of known) copy[key] = (values as Record<string, unknown>)[key];
    return copy;
  } catch (error) {
    if (isLcmError(error)) throw error;
    throw new LcmError("invalid_input", `The arguments could not be read (${describeError(error)}); pass ${expected}, as plain JSON.`);
  }
}

function describe(value: unknown): string {
  const text = typeof value === "string" ? JSON.stringify(value) : Array.isArray(value) ? "an array" : value === null ? "null" : typeof value === "object" ? "an object" : String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
