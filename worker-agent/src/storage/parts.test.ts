import { GIB, MAX_PARTS, planParts } from "@tjm/storage";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { choosePartSize, DEFAULT_PART_SIZE, MIB, MIN_PART_SIZE, missingParts } from "./parts.ts";

describe("choosePartSize", () => {
  it("is 32 MiB by default", () => {
    expect(choosePartSize(100 * MIB)).toBe(DEFAULT_PART_SIZE);
    expect(DEFAULT_PART_SIZE).toBe(32 * MIB);
  });

  it("refuses parts under 5 MiB or over 5 GiB", () => {
    expect(() => choosePartSize(1, MIN_PART_SIZE - 1)).toThrow(RangeError);
    expect(() => choosePartSize(1, 5 * GIB + 1)).toThrow(RangeError);
    expect(choosePartSize(1, MIN_PART_SIZE)).toBe(MIN_PART_SIZE);
  });

  it("grows the part to a whole MiB when the file would need more than 10,000 parts", () => {
    const size = 100 * GIB;
    const partSize = choosePartSize(size, MIN_PART_SIZE);
    expect(partSize % MIB).toBe(0);
    expect(Math.ceil(size / partSize)).toBeLessThanOrEqual(MAX_PARTS);
    expect(Math.ceil(size / (partSize - MIB))).toBeGreaterThan(MAX_PARTS);
  });

  it("grows the part to fit a store's lower part limit (Swift's s3api: 1,000)", () => {
    expect(choosePartSize(4 * GIB, MIN_PART_SIZE, 1_000)).toBe(5 * MIB);
    expect(choosePartSize(10 * GIB, MIN_PART_SIZE, 1_000)).toBe(11 * MIB);
    expect(Math.ceil((10 * GIB) / (11 * MIB))).toBeLessThanOrEqual(1_000);
  });

  it("refuses a file over S3's 5 TiB object limit", () => {
    expect(() => choosePartSize(5 * 1024 * GIB + 1)).toThrow(/5 TiB/);
  });
});

describe("planParts", () => {
  it("covers every byte once, in order, with only the last part short", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 * GIB }), fc.integer({ min: 5, max: 64 }), (size, partMib) => {
        const partSize = choosePartSize(size, partMib * MIB);
        const parts = planParts(size, partSize);
        let offset = 0;
        parts.forEach((part, index) => {
          expect(part.partNumber).toBe(index + 1);
          expect(part.offset).toBe(offset);
          expect(part.length).toBeGreaterThan(0);
          if (index < parts.length - 1) expect(part.length).toBe(partSize);
          offset += part.length;
        });
        expect(offset).toBe(size);
      }),
    );
  });
});

describe("missingParts", () => {
  it("keeps the planned parts not yet stored", () => {
    const plan = planParts(21 * MIB, 5 * MIB);
    expect(missingParts(plan, [1, 2]).map((part) => part.partNumber)).toEqual([3, 4, 5]);
    expect(missingParts(plan, [1, 2, 3, 4, 5])).toEqual([]);
  });
});
