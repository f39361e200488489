/**
 * OpenClaw's own compaction, for the engine served when LCM cannot store anything: `delegateCompactionToRuntime`
 * from `openclaw/plugin-sdk/core` runs the host's built-in summarizer on the host's transcript. The SDK is imported
 * when the plugin registers (never at module load, so the plugin still works without OpenClaw), and the function is
 * kept as it is: the host recognises delegation by function identity and then applies its progress-aware watchdog.
 */
import { describeError } from "../errors.js";
import type { CompactionDelegate } from "../host/openclaw-types.js";

const SDK_MODULE = "openclaw/plugin-sdk/core";

/** A delegate, or why there is none. Contract: resolves, never rejects. */
export type CompactionDelegateLoad = { delegate: CompactionDelegate } | { delegate: null; reason: string };

/** Imports the SDK's `delegateCompactionToRuntime`; resolves with the reason when it cannot be loaded. */
export async function loadRuntimeCompactionDelegate(): Promise<CompactionDelegateLoad> {
  try {
    const module = (await import(SDK_MODULE as string)) as { delegateCompactionToRuntime?: unknown };
    if (typeof module.delegateCompactionToRuntime === "function") {
      return { delegate: module.delegateCompactionToRuntime as CompactionDelegate };
    }
    return { delegate: null, reason: `${SDK_MODULE} has no delegateCompactionToRuntime in this OpenClaw version` };
  } catch (error) {
    return { delegate: null, reason: `${SDK_MODULE} could not be loaded (${describeError(error)})` };
  }
}

/** The delegate of one registration: started at once, read synchronously by the engine factory once loaded. */
export class RuntimeCompaction {
  private loaded: CompactionDelegateLoad | undefined;
  private readonly loading: Promise<CompactionDelegateLoad>;

  constructor(load: () => Promise<CompactionDelegateLoad> = loadRuntimeCompactionDelegate) {
    this.loading = load().then(
      (result) => (this.loaded = result),
      (error: unknown) => (this.loaded = { delegate: null, reason: `loading it failed (${describeError(error)})` }),
    );
  }

  /** The delegate when the import has finished and found it; undefined while it is still loading. */
  current(): CompactionDelegateLoad | undefined {
    return this.loaded;
  }

  /** Waits for the import to finish. */
  settled(): Promise<CompactionDelegateLoad> {
    return this.loading;
  }
}
