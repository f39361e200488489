/**
 * A lease holder's name: host, process id and a random part (a thread, or a restart reusing the pid), so a lease
 * says which process holds it and a process on this host can tell whether that holder is gone.
 */
import { hostname } from "node:os";

export function leaseHolder(): string {
  return `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 10)}`;
}
