import { describe, expect, it } from "vitest";
import { EventLoopPacer } from "../../src/compaction/event-loop-pacer.js";

describe("EventLoopPacer", () => {
  it("takes a turn of the event loop only once the interval has passed since the last one", async () => {
    let now = 0;
    const pacer = new EventLoopPacer(() => now, 10);
    let turns = 0;
    const count = () => {
      turns++;
    };

    setImmediate(count);
    now = 9; // 9 ms < 10 ms: no turn, the pending callback has not run
    await pacer.yieldIfDue();
    expect(turns).toBe(0);

    now = 10; // 10 ms since the pacer started: one turn, the callback runs
    await pacer.yieldIfDue();
    expect(turns).toBe(1);

    setImmediate(count);
    now = 15; // 5 ms since that turn: none
    await pacer.yieldIfDue();
    expect(turns).toBe(1);
  });
});

describe("EventLoopPacer with the default interval", () => {
  it("takes a turn of the event loop before every pass, even when no time has passed", async () => {
    const pacer = new EventLoopPacer(() => 0);
    let turns = 0;
    for (let pass = 0; pass < 3; pass++) {
      setImmediate(() => {
        turns++;
      });
      await pacer.yieldIfDue();
    }
    expect(turns).toBe(3);
  });
});
