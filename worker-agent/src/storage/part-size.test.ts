import { describe, expect, it } from "vitest";
import { estimatedBitrate, MAX_BYTES_IN_FLIGHT, partSizeFor, partsInFlight } from "./part-size.ts";
import { DEFAULT_PART_SIZE, MAX_PART_SIZE, MIB, MIN_PART_SIZE } from "./parts.ts";

const HOUR_MS = 3_600_000;
const h264At = (height: number | undefined) => ({
  video: { codec: "h264", height },
  audio: { bitrateKbps: 128 },
});

describe("estimatedBitrate", () => {
  it("adds the audio bitrate to the video's estimate for the output height", () => {
    expect(estimatedBitrate(h264At(720), undefined)).toBe(4_128_000);
    expect(estimatedBitrate({ audio: { bitrateKbps: 96 } }, 1080)).toBe(96_000);
  });

  it("takes the input's height when the plan keeps it, and 1080 lines when neither says", () => {
    expect(estimatedBitrate(h264At(undefined), 360)).toBe(estimatedBitrate(h264At(360), undefined));
    expect(estimatedBitrate(h264At(undefined), undefined)).toBe(estimatedBitrate(h264At(1080), undefined));
  });

  it("estimates HEVC and AV1 below H.264 at the same height, and a height between rows as the next row", () => {
    const h264 = estimatedBitrate({ video: { codec: "h264", height: 1080 } }, undefined);
    expect(estimatedBitrate({ video: { codec: "hevc", height: 1080 } }, undefined)).toBeLessThan(h264);
    expect(estimatedBitrate({ video: { codec: "av1", height: 1080 } }, undefined)).toBe(h264 / 2);
    expect(estimatedBitrate({ video: { codec: "h264", height: 800 } }, undefined)).toBe(h264);
  });
});

describe("partSizeFor", () => {
  it("is 5 MiB for an ordinary output: its estimate is far below 10,000 parts of 5 MiB", () => {
    expect(
      partSizeFor({ output: h264At(720), durationMs: 60_000, sourceHeight: 720, partLimit: 10_000 }),
    ).toBe(MIN_PART_SIZE);
  });

  it("is bitrate × duration × 1.5 over the part limit, rounded up to a whole MiB", () => {
    // 1080p H.264 + 128 kb/s for 10 hours: 8,128,000 / 8 × 36,000 × 1.5 = 54.9 GB.
    const bytes = (8_128_000 / 8) * 36_000 * 1.5;
    const size = partSizeFor({
      output: h264At(1080),
      durationMs: 10 * HOUR_MS,
      sourceHeight: 1080,
      partLimit: 1_000,
    });
    expect(size).toBe(Math.ceil(bytes / 1_000 / MIB) * MIB);
    expect(size % MIB).toBe(0);
    expect(Math.ceil(bytes / size)).toBeLessThanOrEqual(1_000);
  });

  it("needs bigger parts under Swift's 1,000-part limit than under S3's 10,000", () => {
    const request = { output: h264At(2160), durationMs: 3 * HOUR_MS, sourceHeight: 2160 };
    const s3 = partSizeFor({ ...request, partLimit: 10_000 });
    const swift = partSizeFor({ ...request, partLimit: 1_000 });
    expect(swift).toBeGreaterThan(s3);
    expect(s3).toBeGreaterThanOrEqual(MIN_PART_SIZE);
  });

  it("falls back to the default part size while the duration is not known", () => {
    expect(
      partSizeFor({ output: h264At(720), durationMs: undefined, sourceHeight: 720, partLimit: 10_000 }),
    ).toBe(DEFAULT_PART_SIZE);
    expect(partSizeFor({ output: h264At(720), durationMs: 0, sourceHeight: 720, partLimit: 1_000 })).toBe(
      DEFAULT_PART_SIZE,
    );
  });

  it("stays within S3's 5 GiB part and refuses a part limit outside 1..10,000", () => {
    const huge = partSizeFor({
      output: h264At(4320),
      durationMs: 1000 * HOUR_MS,
      sourceHeight: 4320,
      partLimit: 1,
    });
    expect(huge).toBe(MAX_PART_SIZE);
    for (const partLimit of [0, 10_001, 1.5]) {
      expect(() => partSizeFor({ output: h264At(720), durationMs: 1, sourceHeight: 720, partLimit })).toThrow(
        RangeError,
      );
    }
  });
});

describe("partsInFlight", () => {
  it("sends every part at once when they fit the bound and the memory budget", () => {
    expect(partsInFlight(8, 5 * MIB, 16)).toBe(8);
  });

  it("holds at the bound, and at the memory budget for big parts", () => {
    expect(partsInFlight(100, 5 * MIB, 16)).toBe(16);
    expect(partsInFlight(100, 64 * MIB, 16)).toBe(MAX_BYTES_IN_FLIGHT / (64 * MIB));
  });

  it("is at least one", () => {
    expect(partsInFlight(0, 5 * MIB, 16)).toBe(1);
    expect(partsInFlight(3, MAX_PART_SIZE, 16)).toBe(1);
  });
});
