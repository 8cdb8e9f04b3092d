import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  InputDurationReader,
  ProgressParser,
  type ProgressUpdate,
  progressFromBlock,
  shouldPublish,
} from "./progress.ts";

/** Captured from real ffmpeg 5.1 runs; fixtures/README.md has the commands. */
const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8");

type Row = [
  outTimeMs: number,
  percent: number,
  fps: number | null,
  kbps: number | null,
  speed: number | null,
  eta: number | null,
  final: boolean,
];
const round = (value: number | null) => (value === null ? null : Math.round(value * 100) / 100);
const rows = (updates: ProgressUpdate[]): Row[] =>
  updates.map((u) => [
    u.outTimeMs,
    round(u.percent) as number,
    u.fps,
    u.bitrateKbps,
    u.speed,
    round(u.etaSeconds),
    u.final,
  ]);

describe("ProgressParser on captured ffmpeg output", () => {
  it("3 s of H.264 + AAC encoded in real time: one update per block, the last one final", () => {
    const updates = new ProgressParser(3_000).push(fixture("progress-video-realtime.txt"));
    expect(rows(updates)).toEqual([
      // speed "   0x" is a figure (zero), so no ETA can be derived from it
      [0, 0, 0, null, 0, null, false],
      [341, 11.37, 0, 1.1, 0.663, 4.01, false],
      [874, 29.13, 25.6, 0.4, 0.861, 2.47, false],
      [1360, 45.33, 25.62, 0.3, 0.893, 1.84, false],
      [1877, 62.57, 25.13, 0.2, 0.925, 1.21, false],
      [2389, 79.63, 25.24, 0.2, 0.942, 0.65, false],
      // out_time runs a few ms past the expected end: percent is clamped at 100
      [3008, 100, 24.89, 809.9, 0.998, 0, true],
    ]);
  });

  it("an audio-only encode prints no frame/fps lines: fps is null, N/A figures are null", () => {
    const updates = new ProgressParser(2_000).push(fixture("progress-audio-only-realtime.txt"));
    expect(rows(updates)).toEqual([
      [0, 0, null, null, null, null, false],
      [384, 19.2, null, 72.8, 0.765, 2.11, false],
      [888, 44.4, null, 67.8, 0.878, 1.27, false],
      [1416, 70.8, null, 66.4, 0.933, 0.63, false],
      [2016, 100, null, 65.7, 1.01, 0, true],
    ]);
  });

  it("while x264 fills its lookahead ffmpeg reports zero time and N/A speed", () => {
    const updates = new ProgressParser(3_000).push(fixture("progress-lookahead-na.txt"));
    expect(rows(updates.slice(0, 2))).toEqual([
      [0, 0, 0, null, null, null, false],
      [0, 0, 0, null, 0, null, false],
    ]);
    expect(updates.at(-1)?.final).toBe(true);
  });

  it("gives the same updates however stdout is cut into chunks", () => {
    const text = fixture("progress-video-realtime.txt");
    const whole = new ProgressParser(3_000).push(text);
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: text.length - 1 }), { maxLength: 40 }), (cuts) => {
        const parser = new ProgressParser(3_000);
        const bounds = [0, ...cuts.sort((a, b) => a - b), text.length];
        const updates = bounds.slice(1).flatMap((end, i) => parser.push(text.slice(bounds[i], end)));
        expect(updates).toEqual(whole);
      }),
      { numRuns: 200 },
    );
  });

  it("accepts CRLF line ends and ignores lines without '='", () => {
    const parser = new ProgressParser(10_000);
    expect(parser.push("garbage\r\nout_time_us=5000000\r\nspeed=2x\r\nprogress=continue\r\n")).toEqual([
      {
        percent: 50,
        fps: null,
        bitrateKbps: null,
        speed: 2,
        etaSeconds: 2.5,
        outTimeMs: 5_000,
        final: false,
      },
    ]);
  });

  it("a block with out_time N/A keeps the previous time instead of jumping back to zero", () => {
    const parser = new ProgressParser(10_000);
    parser.push("out_time_us=4000000\nprogress=continue\n");
    const [update] = parser.push("out_time_us=N/A\nout_time_ms=N/A\nout_time=N/A\nprogress=continue\n");
    expect(update?.outTimeMs).toBe(4_000);
  });
});

describe("progressFromBlock", () => {
  const block = (entries: Record<string, string>) => new Map(Object.entries(entries));

  it("falls back to out_time when out_time_us is absent; a negative time counts as zero", () => {
    expect(progressFromBlock(block({ out_time: "00:01:02.500000" }), 125_000).outTimeMs).toBe(62_500);
    expect(progressFromBlock(block({ out_time: "-00:00:00.023220" }), 1_000).outTimeMs).toBe(0);
    expect(progressFromBlock(block({ out_time_us: "-23220" }), 1_000).outTimeMs).toBe(0);
  });

  it("keeps every figure within what the protocol's Progress message accepts", () => {
    const update = progressFromBlock(block({ fps: "250000.0", speed: "99999x", out_time_us: "1000" }), 0);
    expect(update).toMatchObject({ fps: 100_000, speed: 10_000, percent: 0 });
  });
});

describe("an expected duration learnt while ffmpeg runs", () => {
  it("gives percent 0 and no ETA until known, then the figures; the first duration given stays", () => {
    const parser = new ProgressParser(undefined);
    const blockText = (us: number) => `out_time_us=${us}\nspeed=2x\nprogress=continue\n`;
    expect(parser.push(blockText(1_000_000))[0]).toMatchObject({ percent: 0, etaSeconds: null });
    parser.expectDuration(4_000);
    parser.expectDuration(8_000);
    expect(parser.push(blockText(2_000_000))[0]).toMatchObject({ percent: 50, etaSeconds: 1 });
  });

  it("reads the first input's Duration line from stderr, not a later input's, and skips N/A", () => {
    const reader = new InputDurationReader();
    const lines = [
      "Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'http://127.0.0.1:4000/abc':",
      "  Metadata:",
      "    major_brand     : isom",
      "  Duration: 00:01:00.02, start: 0.000000, bitrate: 2000 kb/s",
      "Input #1, png_pipe, from '/work/watermark':",
      "  Duration: 00:00:00.04, start: 0.000000, bitrate: N/A",
    ];
    expect(lines.map((line) => reader.push(line)).filter((ms) => ms !== undefined)).toEqual([60_020]);
    const live = new InputDurationReader();
    expect(["Input #0, mpegts, from 'x':", "  Duration: N/A, start: 1.4"].map((l) => live.push(l))).toEqual([
      undefined,
      undefined,
    ]);
  });
});

describe("shouldPublish", () => {
  const tick = { final: false };
  it.each([
    ["the first update", undefined, 0, tick, true],
    ["an update 499 ms after the last", 1_000, 1_499, tick, false],
    ["an update 500 ms after the last", 1_000, 1_500, tick, true],
    ["the final update, however soon", 1_000, 1_001, { final: true }, true],
  ] as const)("%s -> %s", (_, last, now, update, expected) => {
    expect(shouldPublish(last, now, update)).toBe(expected);
  });

  it("lets through at most two updates per second of a 20 Hz stream, plus the final one", () => {
    let last: number | undefined;
    let published = 0;
    for (let now = 0; now <= 10_000; now += 50) {
      const update = { final: now === 10_000 };
      if (shouldPublish(last, now, update)) {
        published++;
        last = now;
      }
    }
    expect(published).toBe(21);
  });
});
