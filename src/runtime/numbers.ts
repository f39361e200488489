/**
 * Reading sizes the host hands over (token budgets, windows, counts): the host's types promise numbers, but a value
 * may be missing, zero, negative, NaN or not a number at all. These keep the positive finite ones and drop the rest.
 */

/** `value` when it is a finite number above 0, else undefined. */
export function positiveNumber(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

/** positiveNumber rounded down (a token count): 0.5 gives 0, not undefined. */
export function flooredPositive(value: unknown): number | undefined {
  const number = positiveNumber(value);
  return number === undefined ? undefined : Math.floor(number);
}
