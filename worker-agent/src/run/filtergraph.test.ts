import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fanOut, filterArgument, inputStream, link, mapTarget, pad, seconds } from "./filtergraph.ts";

/**
 * libavutil's av_get_token, which both levels of filtergraph parsing use: skips leading
 * blanks, stops at an unescaped terminator, takes the character after "\" literally, copies
 * '…' verbatim and trims trailing blanks that were neither escaped nor quoted.
 */
function getToken(text: string, terminators: string): { token: string; rest: string } {
  const blank = (c: string | undefined) => c !== undefined && " \n\t\r".includes(c);
  let i = 0;
  while (blank(text[i])) i++;
  let out = "";
  let keep = 0;
  while (i < text.length && !terminators.includes(text[i] as string)) {
    const c = text[i++] as string;
    if (c === "\\" && i < text.length) {
      out += text[i++];
      keep = out.length;
    } else if (c === "'") {
      while (i < text.length && text[i] !== "'") out += text[i++];
      if (i < text.length) {
        i++;
        keep = out.length;
      }
    } else {
      out += c;
    }
  }
  while (out.length > keep && blank(out[out.length - 1])) out = out.slice(0, -1);
  return { token: out, rest: text.slice(i) };
}

/** What the subtitles filter receives as `filename` from "[in]subtitles=filename=<arg>[out]". */
function parsedFilename(argument: string): { value: string; graphRest: string; optionRest: string } {
  const graphLevel = getToken(argument, "[],;");
  const optionLevel = getToken(graphLevel.token, ":");
  return { value: optionLevel.token, graphRest: graphLevel.rest, optionRest: optionLevel.rest };
}

describe("filterArgument", () => {
  it("survives both parsing levels unchanged, whatever the characters", () => {
    const ascii = fc.integer({ min: 1, max: 0x7f }).map((code) => String.fromCharCode(code));
    const unicode = fc.integer({ min: 0xa0, max: 0xd7ff }).map((code) => String.fromCharCode(code));
    const text = fc.string({ unit: fc.oneof(fc.constantFrom(..."'\\:,;[] =\t\n"), ascii, unicode) });
    fc.assert(
      fc.property(text, (value) => {
        const parsed = parsedFilename(`${filterArgument(value)}[out]`);
        expect(parsed).toEqual({ value, graphRest: "[out]", optionRest: "" });
      }),
      { numRuns: 500 },
    );
  });

  it.each([
    ["/work/job/plain-name_1.srt", "/work/job/plain-name_1.srt"],
    ["/a b", "/a\\\\\\ b"],
    ["/x:y", "/x\\\\\\:y"],
    ["/it's", "/it\\\\\\'s"],
    ["/ünï/字幕.srt", "/ünï/字幕.srt"],
  ])("%s -> %s", (value, escaped) => {
    expect(filterArgument(value)).toBe(escaped);
  });
});

describe("stream references", () => {
  it("an input stream is [0:a:1] in the graph and 0:a:1 for -map; a pad is [name] in both", () => {
    expect([link(inputStream("0:a:1")), mapTarget(inputStream("0:a:1"))]).toEqual(["[0:a:1]", "0:a:1"]);
    expect([link(pad("a0kept")), mapTarget(pad("a0kept"))]).toEqual(["[a0kept]", "[a0kept]"]);
  });

  it("fanOut adds a split only for two or more consumers", () => {
    const graph: string[] = [];
    expect(fanOut(graph, inputStream("0:v:0"), 1, "split", "v")).toEqual([inputStream("0:v:0")]);
    expect(fanOut(graph, inputStream("0:v:0"), 0, "split", "v")).toEqual([]);
    expect(graph).toEqual([]);
    expect(fanOut(graph, pad("kept"), 3, "asplit", "afan")).toEqual([
      pad("afan0"),
      pad("afan1"),
      pad("afan2"),
    ]);
    expect(graph).toEqual(["[kept]asplit=3[afan0][afan1][afan2]"]);
  });
});

describe("seconds", () => {
  it.each([
    [0, "0"],
    [33, "0.033"],
    [1500, "1.5"],
    [7_250, "7.25"],
    [3_600_000, "3600"],
  ])("%i ms -> %s", (ms, text) => {
    expect(seconds(ms)).toBe(text);
  });
});
