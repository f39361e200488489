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

  it("keeps the longest slice: from a slice's start to the yield that ended it, the running slice included", async () => {
    const clock = manualClock();
    const cpu = manualClock();
    const slicer = new TimeSlicer(15, clock.now, cpu.now);
    clock.ms = 12;
    cpu.ms = 9;
    await slicer.yield(); // a slice of 12 ms, 9 ms of it on the CPU
    clock.ms = 19;
    expect(slicer.longestSlice()).toEqual({ wallMs: 12, cpuMs: 9 }); // the running one has taken 7 ms
    clock.ms = 40;
    cpu.ms = 12;
    expect(slicer.longestSlice()).toEqual({ wallMs: 28, cpuMs: 3 }); // ... now 28 ms, 3 ms on the CPU (it waited for a core)
  });

  it("counts a wait in no slice: the slice ends where the wait begins, a new one starts after it", async () => {
    const clock = manualClock();
    const slicer = new TimeSlicer(15, clock.now, () => null);
    clock.ms = 5;
    const written = await slicer.waitFor(async () => {
      await nextLoopTurn();
      clock.ms = 3_005; // three seconds writing a file, the event loop running meanwhile
      return "archive";
    });
    expect(written).toBe("archive");
    expect(slicer.elapsed()).toBe(0);
    clock.ms = 3_009;
    expect(slicer.longestSlice()).toEqual({ wallMs: 5, cpuMs: null });
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
