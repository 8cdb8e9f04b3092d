import { describe, expect, it } from "vitest";
import { bucketNameProblem, copySource, formatS3Uri, parseS3Uri, splitS3Uri } from "./uri.ts";

describe("parseS3Uri", () => {
  it("a bucket and key URI yields its bucket and key", () => {
    expect(parseS3Uri("s3://media-in/movies/42/source.mov")).toEqual({
      ok: true,
      location: { bucket: "media-in", key: "movies/42/source.mov" },
    });
  });

  it("a key with spaces, unicode and further slashes is kept as written", () => {
    expect(parseS3Uri("s3://media-in/Filme/été 2024//a b.mov")).toEqual({
      ok: true,
      location: { bucket: "media-in", key: "Filme/été 2024//a b.mov" },
    });
  });

  it.each([
    ["an http URI", "http://media-in/movies/42/source.mov"],
    ["an https URL", "https://media-in.s3.amazonaws.com/movies/42/source.mov"],
    ["a file URI", "file:///srv/media/source.mov"],
    ["a gs URI", "gs://media-in/movies/42/source.mov"],
    ["an upper-case S3:// scheme", "S3://media-in/movies/42/source.mov"],
    ["a bucket/key path without a scheme", "media-in/movies/42/source.mov"],
    ["an empty string", ""],
  ])("%s is refused", (_name, uri) => {
    expect(parseS3Uri(uri)).toEqual({ ok: false, problem: "must be an s3://bucket/key URI" });
  });

  it("a URI with a bucket but no key is refused", () => {
    expect(parseS3Uri("s3://media-in")).toEqual({
      ok: false,
      problem: "must be an s3://bucket/key URI: the object key is missing",
    });
  });

  it("a URI with an empty key is refused", () => {
    expect(parseS3Uri("s3://media-in/")).toEqual({ ok: false, problem: "object key must not be empty" });
  });

  it("a URI with a broken bucket name reports the bucket's problem", () => {
    expect(parseS3Uri("s3://Media-In/source.mov")).toEqual({
      ok: false,
      problem: "bucket name may hold only lowercase letters, digits, dots and hyphens",
    });
  });

  it("a key of exactly 1024 bytes is accepted", () => {
    expect(parseS3Uri(`s3://media-in/${"k".repeat(1024)}`).ok).toBe(true);
  });

  it("a key longer than 1024 bytes is refused", () => {
    expect(parseS3Uri(`s3://media-in/${"k".repeat(1025)}`)).toEqual({
      ok: false,
      problem: "object key must be at most 1024 bytes",
    });
  });

  it("a key is measured in UTF-8 bytes, not characters", () => {
    // 342 euro signs are 342 characters but 1026 bytes.
    expect(parseS3Uri(`s3://media-in/${"€".repeat(342)}`)).toEqual({
      ok: false,
      problem: "object key must be at most 1024 bytes",
    });
  });

  it.each([
    ["NUL", "\u0000"],
    ["a tab", "\t"],
    ["a newline", "\n"],
    ["unit separator", "\u001f"],
    ["DEL", "\u007f"],
  ])("a key holding %s is refused", (_name, character) => {
    expect(parseS3Uri(`s3://media-in/movies/${character}42.mov`)).toEqual({
      ok: false,
      problem: "object key must not hold control characters",
    });
  });

  it("a key holding half of a UTF-16 pair is refused, while a whole pair (an emoji) is fine", () => {
    expect(parseS3Uri("s3://media-in/movies/\ud83c42.mov")).toEqual({
      ok: false,
      problem: "object key must be well-formed Unicode",
    });
    expect(parseS3Uri("s3://media-in/movies/🎬42.mov").ok).toBe(true);
  });
});

describe("bucketNameProblem", () => {
  it.each([
    ["a 3-character name", "abc"],
    ["a 63-character name", "a".repeat(63)],
    ["a name of digits", "123"],
    ["a name with hyphens", "media-in"],
    ["a name with single dots", "media.in.eu"],
    ["a dotted name of three numbers", "192.168.5"],
    ["a dotted name of five numbers", "1.2.3.4.5"],
  ])("%s is accepted", (_name, bucket) => {
    expect(bucketNameProblem(bucket)).toBeUndefined();
  });

  it.each([
    ["a bucket name shorter than 3 characters", "ab", "bucket name must be 3 to 63 characters long"],
    [
      "a bucket name longer than 63 characters",
      "a".repeat(64),
      "bucket name must be 3 to 63 characters long",
    ],
    [
      "a bucket name with uppercase letters",
      "Media-In",
      "bucket name may hold only lowercase letters, digits, dots and hyphens",
    ],
    [
      "a bucket name with an underscore",
      "media_in",
      "bucket name may hold only lowercase letters, digits, dots and hyphens",
    ],
    [
      "a bucket name with a space",
      "media in",
      "bucket name may hold only lowercase letters, digits, dots and hyphens",
    ],
    [
      "a bucket name starting with a hyphen",
      "-media",
      "bucket name must start and end with a letter or digit",
    ],
    ["a bucket name ending with a hyphen", "media-", "bucket name must start and end with a letter or digit"],
    ["a bucket name starting with a dot", ".media", "bucket name must start and end with a letter or digit"],
    ["a bucket name ending with a dot", "media.", "bucket name must start and end with a letter or digit"],
    [
      "a bucket name with two adjacent periods",
      "media..in",
      "bucket name must not hold two adjacent periods or a period next to a hyphen",
    ],
    [
      "a bucket name with a period before a hyphen",
      "media.-in",
      "bucket name must not hold two adjacent periods or a period next to a hyphen",
    ],
    [
      "a bucket name with a hyphen before a period",
      "media-.in",
      "bucket name must not hold two adjacent periods or a period next to a hyphen",
    ],
    [
      "a bucket name shaped like an IP address",
      "192.168.5.4",
      "bucket name must not look like an IP address",
    ],
    ["a bucket name with the xn-- prefix", "xn--media", "bucket name uses a reserved prefix"],
    ["a bucket name with the sthree- prefix", "sthree-media", "bucket name uses a reserved prefix"],
  ])("%s is refused", (_name, bucket, problem) => {
    expect(bucketNameProblem(bucket)).toBe(problem);
  });
});

describe("bucketNameProblem and access point aliases", () => {
  // Aliases are valid wherever a bucket name is, so a location may name one.
  it.each(["media-s3alias", "media--ol-s3"])("%s is accepted", (alias) => {
    expect(bucketNameProblem(alias)).toBeUndefined();
  });
});

describe("splitS3Uri", () => {
  it("splits bucket and key, keeping the key literal", () => {
    expect(splitS3Uri("s3://media-in/a/b c%20d.mp4")).toEqual({ bucket: "media-in", key: "a/b c%20d.mp4" });
    expect(formatS3Uri(splitS3Uri("s3://media-in/x/"))).toBe("s3://media-in/x/");
  });

  it.each([
    ["no key", "s3://media-in"],
    ["an empty key", "s3://media-in/"],
    ["an upper-case bucket", "s3://Media/key"],
    ["a two-letter bucket", "s3://ab/key"],
    ["another scheme", "https://media-in/key"],
  ])("refuses %s", (_label, uri) => {
    expect(() => splitS3Uri(uri)).toThrow(/not an s3:\/\/bucket\/key URI/);
  });
});

describe("copySource", () => {
  it("percent-encodes each key segment and keeps the slashes", () => {
    expect(copySource({ bucket: "b-1", key: "jobs/1/a b+c#.mp4" })).toBe("b-1/jobs/1/a%20b%2Bc%23.mp4");
  });
});
