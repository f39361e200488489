/**
 * Who still needs the process's database connections. Each live registration of the plugin holds them; when OpenClaw
 * retires the last one (the plugin is reloaded, disabled, or the gateway stops) they are closed, each folding its
 * write-ahead log into the file and stopping its checkpoint worker. A registration that comes later opens them again
 * on first use. Registrations the host never retires (discovery modes) keep them open, which is the safe side.
 */
import { closeAllDatabases } from "../db/connection-registry.js";
import { processShared } from "./process-shared.js";

export class ConnectionHolds {
  private holders = 0;

  constructor(private readonly closeAll: () => void) {}

  /** Holds the connections; the returned release lets go (twice is once) and closes them after the last holder. */
  hold(): () => void {
    this.holders++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holders = Math.max(0, this.holders - 1);
      if (this.holders === 0) this.closeAll();
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
