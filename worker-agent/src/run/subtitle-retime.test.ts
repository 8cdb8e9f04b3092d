import { describe, expect, it } from "vitest";
import { PlanNotApplicableError } from "./plan-errors.ts";
import { retimeSubtitles, subtitleFormat } from "./subtitle-retime.ts";

// Removing [2 s, 4 s) from a 10 s input: input 5 s is output 3 s.
const removed = [{ startMs: 2_000, endMs: 4_000 }];

describe("retimeSubtitles", () => {
  it("SubRip: shifts later cues, drops one inside the cut, joins one across it, renumbers", () => {
    const srt = [
      "1\n00:00:00,500 --> 00:00:01,500\nbefore",
      "2\n00:00:02,200 --> 00:00:03,800\ninside the cut",
      "3\n00:00:01,800 --> 00:00:04,500\nacross the cut",
      "4\n00:00:05,000 --> 00:00:06,250\nafter\nsecond line",
      "5\n00:00:09,500 --> 00:00:12,000\nruns past the end",
    ].join("\n\n");
    expect(retimeSubtitles(`${srt}\n`, removed, 10_000)).toBe(
      [
        "1\n00:00:00,500 --> 00:00:01,500\nbefore",
        "2\n00:00:01,800 --> 00:00:02,500\nacross the cut",
        "3\n00:00:03,000 --> 00:00:04,250\nafter\nsecond line",
        "4\n00:00:07,500 --> 00:00:08,000\nruns past the end\n",
      ].join("\n\n"),
    );
  });

  it("SubRip with CRLF and a BOM is still read", () => {
    const srt = "\uFEFF1\r\n00:00:05,000 --> 00:00:06,000\r\nhello\r\n";
    expect(retimeSubtitles(srt, removed, 10_000)).toBe("\uFEFF1\n00:00:03,000 --> 00:00:04,000\nhello\n");
  });

  it("WebVTT: keeps the header, NOTE blocks, cue ids and cue settings; hours may be absent", () => {
    const vtt = [
      "WEBVTT",
      "NOTE made by hand",
      "intro\n00:00.500 --> 00:01.000 align:start\nhi",
      "00:02.500 --> 00:03.000\ngone",
      "01:00:05.000 --> 01:00:06.000 line:0\nlate",
    ].join("\n\n");
    expect(retimeSubtitles(vtt, removed, 4_000_000)).toBe(
      [
        "WEBVTT",
        "NOTE made by hand",
        "intro\n00:00:00.500 --> 00:00:01.000 align:start\nhi",
        "01:00:03.000 --> 01:00:04.000 line:0\nlate\n",
      ].join("\n\n"),
    );
  });

  it("ASS: rewrites Dialogue times in centiseconds and leaves every other line alone", () => {
    const ass = [
      "[Script Info]",
      "ScriptType: v4.00+",
      "",
      "[Events]",
      "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text",
      "Dialogue: 0,0:00:05.00,0:00:06.50,Default,,0,0,0,,Hello, world",
      "Dialogue: 0,0:00:02.10,0:00:03.90,Default,,0,0,0,,gone",
      "Comment: 0,0:00:02.10,0:00:03.90,Default,,0,0,0,,kept as is",
      "",
    ].join("\n");
    expect(retimeSubtitles(ass, removed, 10_000)).toBe(
      [
        "[Script Info]",
        "ScriptType: v4.00+",
        "",
        "[Events]",
        "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text",
        "Dialogue: 0,0:00:03.00,0:00:04.50,Default,,0,0,0,,Hello, world",
        "Comment: 0,0:00:02.10,0:00:03.90,Default,,0,0,0,,kept as is",
        "",
      ].join("\n"),
    );
  });
});

describe("retimeSubtitles refuses a plan that removes everything", () => {
  it("as the plan's failure (INPUT_INCOMPATIBLE), like the ffmpeg arguments would, since it runs before them", () => {
    const srt = "1\n00:00:01,000 --> 00:00:02,000\nhello\n";
    let thrown: unknown;
    try {
      retimeSubtitles(srt, [{ startMs: 0, endMs: 10_000 }], 10_000);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PlanNotApplicableError);
    expect(thrown).toMatchObject({ failureCode: "INPUT_INCOMPATIBLE", message: /cover the whole input/ });
  });
});

describe("subtitleFormat", () => {
  it.each([
    ["WEBVTT\n\n00:01.000 --> 00:02.000\nx", "vtt"],
    ["\uFEFFWEBVTT - title\n", "vtt"],
    ["[Script Info]\nTitle: x\n", "ass"],
    ["1\n00:00:01,000 --> 00:00:02,000\nx\n", "srt"],
  ])("%j -> %s", (text, format) => {
    expect(subtitleFormat(text)).toBe(format);
  });
});
