import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { GIB, MIB, multipartEtag, planCopyParts, planParts } from "./parts.ts";

describe("planParts", () => {
  it("cuts 21 MiB into four 5 MiB parts and a 1 MiB last part", () => {
    expect(planParts(21 * MIB, 5 * MIB)).toEqual([
      { partNumber: 1, offset: 0, length: 5 * MIB },
      { partNumber: 2, offset: 5 * MIB, length: 5 * MIB },
      { partNumber: 3, offset: 10 * MIB, length: 5 * MIB },
      { partNumber: 4, offset: 15 * MIB, length: 5 * MIB },
      { partNumber: 5, offset: 20 * MIB, length: MIB },
    ]);
  });

  it("makes a file smaller than a part one part, and an empty file one empty part", () => {
    expect(planParts(1234, 8 * MIB)).toEqual([{ partNumber: 1, offset: 0, length: 1234 }]);
    expect(planParts(0, 8 * MIB)).toEqual([{ partNumber: 1, offset: 0, length: 0 }]);
  });

  it("does not add an empty part when the size is a multiple of the part size", () => {
    expect(planParts(10 * MIB, 5 * MIB).map((part) => part.length)).toEqual([5 * MIB, 5 * MIB]);
  });
});

describe("planCopyParts", () => {
  it("copies a 6 GiB object in twelve 512 MiB inclusive ranges", () => {
    const size = 6 * GIB;
    const parts = planCopyParts(size);
    expect(parts).toHaveLength(12);
    expect(parts[0]).toEqual({ partNumber: 1, range: `bytes=0-${512 * MIB - 1}` });
    expect(parts[11]).toEqual({ partNumber: 12, range: `bytes=${11 * 512 * MIB}-${size - 1}` });
  });

  it("ends a short last range at the last byte", () => {
    expect(planCopyParts(10, 4)).toEqual([
      { partNumber: 1, range: "bytes=0-3" },
      { partNumber: 2, range: "bytes=4-7" },
      { partNumber: 3, range: "bytes=8-9" },
    ]);
  });
});

describe("multipartEtag", () => {
  it("is the MD5 of the parts' binary MD5s, a dash and the part count", () => {
    const md5 = (text: string) => createHash("md5").update(text).digest();
    const parts = [`"${md5("a").toString("hex")}"`, `"${md5("b").toString("hex")}"`];
    const expected = createHash("md5")
      .update(Buffer.concat([md5("a"), md5("b")]))
      .digest("hex");
    expect(multipartEtag(parts)).toBe(`"${expected}-2"`);
  });

  it("is unknown when a part's ETag is not an MD5 (SSE-KMS)", () => {
    expect(multipartEtag(['"not-an-md5"'])).toBeUndefined();
  });
});
