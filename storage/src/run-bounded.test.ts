import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { runBounded } from "./run-bounded.ts";

describe("runBounded", () => {
  it("never runs more than `concurrency` items at once, and runs them all", async () => {
    let running = 0;
    let most = 0;
    const done: number[] = [];
    await runBounded([1, 2, 3, 4, 5, 6, 7], 3, async (item) => {
      running++;
      most = Math.max(most, running);
      await delay(5);
      running--;
      done.push(item);
    });
    expect(most).toBe(3);
    expect(done.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it("after a failure starts nothing new, aborts the others' signal, waits for them, and rejects with it", async () => {
    const started: number[] = [];
    const settled: number[] = [];
    const failure = new Error("part 2 failed");
    const result = runBounded([1, 2, 3, 4, 5], 2, async (item, signal) => {
      started.push(item);
      if (item === 2) throw failure;
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      settled.push(item);
    });
    await expect(result).rejects.toBe(failure);
    expect(started).toEqual([1, 2]);
    expect(settled).toEqual([1]);
  });

  it("refuses a concurrency below 1", async () => {
    await expect(runBounded([1], 0, async () => {})).rejects.toThrow(RangeError);
  });
});
