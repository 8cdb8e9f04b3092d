import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { partStillInFile, readyParts } from "./growing-parts.ts";

const numbers = (parts: { partNumber: number }[]) => parts.map((part) => part.partNumber);

describe("readyParts", () => {
  it("never offers part 1, nor a part the file has not grown past", () => {
    expect(readyParts(0, 10, new Set(), 10_000)).toEqual([]);
    expect(readyParts(19, 10, new Set(), 10_000)).toEqual([]);
    expect(readyParts(20, 10, new Set(), 10_000)).toEqual([{ partNumber: 2, offset: 10, length: 10 }]);
    expect(numbers(readyParts(45, 10, new Set(), 10_000))).toEqual([2, 3, 4]);
  });

  it("skips parts already taken, in order", () => {
    expect(numbers(readyParts(60, 10, new Set([2, 4]), 10_000))).toEqual([3, 5, 6]);
  });

  it("stops at the store's part limit", () => {
    expect(numbers(readyParts(1000, 10, new Set(), 5))).toEqual([2, 3, 4, 5]);
  });

  it("offers only whole parts lying within the written bytes, each once", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.array(fc.integer({ min: 0, max: 2_000 }), { minLength: 1, maxLength: 20 }),
        (partSize, sizes) => {
          const taken = new Set<number>();
          let written = 0;
          for (const size of sizes) {
            written = Math.max(written, size);
            for (const part of readyParts(written, partSize, taken, 10_000)) {
              expect(part.partNumber).toBeGreaterThanOrEqual(2);
              expect(part.length).toBe(partSize);
              expect(part.offset + part.length).toBeLessThanOrEqual(written);
              expect(taken.has(part.partNumber)).toBe(false);
              taken.add(part.partNumber);
            }
          }
          expect(taken.size).toBe(Math.max(0, Math.floor(written / partSize) - 1));
        },
      ),
    );
  });
});

describe("partStillInFile", () => {
  it("holds while the part's whole range is within the final file", () => {
    expect(partStillInFile(3, 10, 30)).toBe(true);
    expect(partStillInFile(3, 10, 29)).toBe(false);
  });
});
