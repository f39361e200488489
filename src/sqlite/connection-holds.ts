/**
 * Who still needs the process's database connections. Each live registration of the plugin holds them; when OpenClaw
 * retires the last one (the plugin is reloaded, disabled, or the gateway stops) they are closed, each folding its
 * write-ahead log into the file and stopping its checkpoint worker. A registration that comes later opens them again
 * on first use. Registrations the host never retires (discovery modes) keep them open, which is the safe side.
 */
import { closeAllDatabases } from "./connection-registry.js";
import { processShared } from "../runtime/process-shared.js";

/** Work that outlives its hook (maintain finishing in the background) holds a retired plugin's connections this long at most. */
export const BUSY_CLOSE_WAIT_MS = 60_000;

export class ConnectionHolds {
  private holders = 0;
  private readonly busy = new Set<Promise<unknown>>();

  constructor(private readonly closeAll: () => void, private readonly busyWaitMs = BUSY_CLOSE_WAIT_MS) {}

  /**
   * Keeps the connections open until `work` settles, should the last holder let go meanwhile (at most busyWaitMs):
   * a compaction finishing in the background completes its write instead of failing on a closed database.
   */
  whileBusy(work: Promise<unknown>): void {
    const tracked = work.then(() => undefined, () => undefined);
    this.busy.add(tracked);
    void tracked.then(() => this.busy.delete(tracked));
  }

  /** Holds the connections; the returned release lets go (twice is once) and closes them after the last holder. */
  hold(): () => void {
    this.holders++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holders = Math.max(0, this.holders - 1);
      if (this.holders > 0) return;
      if (this.busy.size === 0) {
        this.closeAll();
        return;
      }
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, this.busyWaitMs);
        timer.unref?.();
      });
      void Promise.race([Promise.all([...this.busy]), waited]).then(() => {
        clearTimeout(timer);
        if (this.holders === 0) this.closeAll(); // unless a new registration took them meanwhile
      });
    };
  }

  get count(): number {
    return this.holders;
  }
}

/** The process's holds, shared by every copy of the plugin module. */
export function processConnectionHolds(): ConnectionHolds {
  return processShared("connection-holds.v1", () => new ConnectionHolds(closeAllDatabases));
}
