import { describe, expect, it } from "vitest";
import { KeyedSequence } from "./keyed-sequence.ts";

describe("a keyed sequence", () => {
  it("runs one key's tasks in the order given, a slow or failed one holding back only its own key", async () => {
    const sequence = new KeyedSequence();
    const order: string[] = [];
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = sequence.run("a", async () => {
      await held;
      order.push("a1");
      throw new Error("a1 failed");
    });
    const second = sequence.run("a", async () => {
      order.push("a2");
      return 2;
    });
    await sequence.run("b", async () => {
      order.push("b1");
    });
    expect(order).toEqual(["b1"]);
    release();
    await expect(first).rejects.toThrow("a1 failed");
    expect(await second).toBe(2);
    expect(order).toEqual(["b1", "a1", "a2"]);
  });
});
