import { describe, expect, it } from "vitest";
import { keptDurationMs, keptRanges, NothingLeftError, spanOnOutput } from "./timeline.ts";

describe("keptRanges", () => {
  it("no segments keep the whole input, open-ended", () => {
    expect(keptRanges([], 10_000)).toEqual([{ startMs: 0, endMs: undefined }]);
  });

  it("segments in any order leave the spans between them; the last span runs to the real end", () => {
    const ranges = keptRanges(
      [
        { startMs: 6_000, endMs: 7_000 },
        { startMs: 1_000, endMs: 2_000 },
      ],
      10_000,
    );
    expect(ranges).toEqual([
      { startMs: 0, endMs: 1_000 },
      { startMs: 2_000, endMs: 6_000 },
      { startMs: 7_000, endMs: undefined },
    ]);
    expect(keptDurationMs(ranges, 10_000)).toBe(8_000);
  });

  it("touching segments leave no empty span; head and tail removal leave one span", () => {
    expect(
      keptRanges(
        [
          { startMs: 0, endMs: 1_000 },
          { startMs: 1_000, endMs: 2_000 },
          { startMs: 9_000, endMs: 10_000 },
        ],
        10_000,
      ),
    ).toEqual([{ startMs: 2_000, endMs: 9_000 }]);
  });

  it("segments are clipped to the input: one past the end removes nothing", () => {
    expect(keptRanges([{ startMs: 10_000, endMs: 11_000 }], 10_000)).toEqual([
      { startMs: 0, endMs: undefined },
    ]);
    const across = keptRanges([{ startMs: 8_000, endMs: 60_000 }], 10_000);
    expect(across).toEqual([{ startMs: 0, endMs: 8_000 }]);
    expect(keptDurationMs(across, 10_000)).toBe(8_000);
  });

  it("removing everything is refused", () => {
    expect(() => keptRanges([{ startMs: 0, endMs: 10_000 }], 10_000)).toThrow(NothingLeftError);
    expect(() =>
      keptRanges(
        [
          { startMs: 5_000, endMs: 12_000 },
          { startMs: 0, endMs: 5_000 },
        ],
        10_000,
      ),
    ).toThrow(NothingLeftError);
  });
});

describe("spanOnOutput", () => {
  // kept: [0,1000) [2000,6000) [7000,10000) -> output [0,1000) [1000,5000) [5000,8000)
  const ranges = [
    { startMs: 0, endMs: 1_000 },
    { startMs: 2_000, endMs: 6_000 },
    { startMs: 7_000, endMs: 10_000 },
  ];
  it.each([
    ["before any cut", 200, 800, { startMs: 200, endMs: 800 }],
    ["after the first cut", 2_500, 3_000, { startMs: 1_500, endMs: 2_000 }],
    ["inside a removed span", 1_200, 1_800, undefined],
    ["starting in a removed span", 1_500, 2_500, { startMs: 1_000, endMs: 1_500 }],
    ["ending in a removed span", 5_500, 6_500, { startMs: 4_500, endMs: 5_000 }],
    ["across a removed span", 500, 2_500, { startMs: 500, endMs: 1_500 }],
    ["past the last kept span", 10_500, 11_000, undefined],
  ])("%s", (_, start, end, expected) => {
    expect(spanOnOutput(start, end, ranges)).toEqual(expected);
  });
});
