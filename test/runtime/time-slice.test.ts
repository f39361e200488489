import { describe, expect, it } from "vitest";
import { readFile } from "node:fs";
import { nextLoopTurn, TimeSlicer } from "../../src/runtime/time-slice.js";

/** A clock the test moves by hand. */
function manualClock() {
  const clock = { ms: 0, now: () => clock.ms };
  return clock;
}

describe("TimeSlicer", () => {
  it("expires once the slice has run its time, and a yield starts a new slice", async () => {
    const clock = manualClock();
    const slicer = new TimeSlicer(15, clock.now);
    clock.ms = 14;
    expect(slicer.expired()).toBe(false);
    clock.ms = 15; // 15 ms of work → the slice is spent
    expect(slicer.expired()).toBe(true);
    await slicer.yield();
    expect(slicer.expired()).toBe(false);
    expect(slicer.yields).toBe(1);
  });

  it("yields at a checkpoint only when the slice is spent", async () => {
    const clock = manualClock();
    const slicer = new TimeSlicer(15, clock.now);
    clock.ms = 5;
    await slicer.checkpoint();
    expect(slicer.yields).toBe(0);
    clock.ms = 20;
    await slicer.checkpoint();
    expect(slicer.yields).toBe(1);
    expect(slicer.elapsed()).toBe(0);
  });

  it("lets timers and I/O callbacks run when it yields", async () => {
    const slicer = new TimeSlicer(0);
    let ran = false;
    setTimeout(() => (ran = true), 0);
    // A setTimeout(0) fires within a couple of loop turns (libuv rounds it up to 1 ms).
    for (let turn = 0; turn < 100 && !ran; turn++) {
      const until = performance.now() + 1.5;
      while (performance.now() < until) { /* a row of work */ }
      await slicer.yield();
    }
    expect(ran).toBe(true);
  });

  it("resumed from an I/O callback, yields past a due timer (one setImmediate would not)", async () => {
    const order: string[] = [];
    await new Promise<void>((done) => {
      readFile(import.meta.filename, () => {
        // The poll phase: a timer set now is due after 1 ms of work; one setImmediate fires before it, in this iteration.
        setTimeout(() => order.push("timer"), 0);
        const until = performance.now() + 2;
        while (performance.now() < until) { /* a row of work */ }
        setImmediate(() => order.push("one setImmediate"));
        void nextLoopTurn().then(() => {
          order.push("nextLoopTurn");
          done();
        });
      });
    });
    expect(order).toEqual(["one setImmediate", "timer", "nextLoopTurn"]);
  });

  it("with a slice of 0 ms is always spent: every transaction does exactly one row", () => {
    expect(new TimeSlicer(0).expired()).toBe(true);
  });
});
