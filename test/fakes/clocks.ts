/** Clocks for tests: fixed, or stepping forward on every read. Both record how often they were read. */
import type { Clock } from "../../src/contracts.js";

export class SteppingClock implements Clock {
  reads = 0;
  constructor(private current = Date.UTC(2026, 10, 1, 9, 0, 0), private readonly step = 1_000) {}
  now(): number {
    this.reads++;
    const value = this.current;
    this.current += this.step;
    return value;
  }
  advance(millis: number): void {
    this.current += millis;
  }
}
