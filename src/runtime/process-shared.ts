/**
 * State shared by every copy of the plugin in one process. OpenClaw loads the plugin module several times per
 * gateway process and builds a new engine for every turn, so module-level variables are not shared; a value
 * kept on globalThis under a versioned `Symbol.for` key is. Use it only for process-wide resources (database
 * connections, per-session queues, circuit breakers), never for per-turn state.
 */
export function processShared<T>(name: string, create: () => T): T {
  const key = Symbol.for(`openclaw-lcm.${name}`);
  const holder = globalThis as unknown as Record<symbol, T | undefined>;
  let value = holder[key];
  if (value === undefined) {
    value = create();
    holder[key] = value;
  }
  return value;
}
