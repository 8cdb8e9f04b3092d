import { describe, expect, it } from "vitest";
import { writtenFrontToBack } from "./output-uploads.ts";

describe("writtenFrontToBack", () => {
  it("holds for MPEG-TS and fragmented MP4, which ffmpeg never seeks back in", () => {
    expect(writtenFrontToBack({ container: "mpegts" })).toBe(true);
    expect(writtenFrontToBack({ container: "mp4", fragmented: true })).toBe(true);
  });

  it("does not for faststart MP4 and MOV, nor Matroska and WebM, which rewrite their header", () => {
    expect(writtenFrontToBack({ container: "mp4" })).toBe(false);
    expect(writtenFrontToBack({ container: "mp4", fragmented: false })).toBe(false);
    expect(writtenFrontToBack({ container: "mov", fragmented: true })).toBe(false);
    expect(writtenFrontToBack({ container: "mkv" })).toBe(false);
    expect(writtenFrontToBack({ container: "webm" })).toBe(false);
  });
});
