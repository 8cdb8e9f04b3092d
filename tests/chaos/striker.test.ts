import { describe, expect, it } from "vitest";
import { type Fault, Striker } from "./striker.ts";

interface Target {
  name: string;
}

/** A Striker whose slot lookups wait until released, and which records every fault it delivers. */
function harness(slotOf: (attemptId: string) => string | undefined) {
  const lookups: (() => void)[] = [];
  const faults: { slot: string; target: string }[] = [];
  const restarts: (() => void)[] = [];
  const striker = new Striker<Target, string>({
    slotOf: (attemptId) =>
      new Promise((resolve) => {
        lookups.push(() => resolve(slotOf(attemptId)));
      }),
    fault: (slot, target): Fault => {
      faults.push({ slot, target: target.name });
      return {
        delivered: Promise.resolve(),
        recovered: new Promise((resolve) => {
          restarts.push(resolve);
        }),
      };
    },
  });
  const answerLookups = async () => {
    for (const answer of lookups.splice(0)) answer();
    await new Promise((resolve) => setTimeout(resolve, 0));
  };
  return { striker, faults, restarts, answerLookups };
}

describe("the chaos striker", () => {
  it("faults a target once when two of its triggers race through the slot lookup", async () => {
    const { striker, faults, answerLookups } = harness(() => "agent-1");
    const target = { name: "download" };
    // ffprobe's and ffmpeg's reads of the input reach the store together.
    const first = striker.strike(target, "attempt-1");
    const second = striker.strike(target, "attempt-1");
    await answerLookups();
    expect(await Promise.all([first, second])).toEqual([true, false]);
    expect(faults).toEqual([{ slot: "agent-1", target: "download" }]);
  });

  it("faults a slot once until it recovers, whichever targets race for it", async () => {
    const { striker, faults, restarts, answerLookups } = harness(() => "agent-1");
    const one = { name: "one" };
    const other = { name: "other" };
    const first = striker.strike(one, "attempt-1");
    const second = striker.strike(other, "attempt-2");
    await answerLookups();
    expect(await Promise.all([first, second])).toEqual([true, false]);
    expect(faults).toEqual([{ slot: "agent-1", target: "one" }]);

    // Turned away while the slot restarted, the other target is struck once it has.
    for (const restart of restarts.splice(0)) restart();
    await striker.settled();
    const later = striker.strike(other, "attempt-2");
    await answerLookups();
    expect(await later).toBe(true);
    expect(faults.map((fault) => fault.target)).toEqual(["one", "other"]);
  });

  it("leaves a target whose slot is not known yet to a later trigger", async () => {
    let known = false;
    const { striker, faults, answerLookups } = harness(() => (known ? "agent-2" : undefined));
    const target = { name: "encode" };
    const early = striker.strike(target, "attempt-1");
    await answerLookups();
    expect(await early).toBe(false);
    known = true;
    const later = striker.strike(target, "attempt-1");
    await answerLookups();
    expect(await later).toBe(true);
    expect(faults).toEqual([{ slot: "agent-2", target: "encode" }]);
  });
});
