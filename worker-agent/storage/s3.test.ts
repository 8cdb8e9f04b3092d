import { describe, expect, it } from "vitest";
import { copySource, createS3Client, formatS3Uri, parseS3Uri } from "./s3.ts";

describe("parseS3Uri", () => {
  it("splits bucket and key, keeping the key literal", () => {
    expect(parseS3Uri("s3://media-in/a/b c%20d.mp4")).toEqual({ bucket: "media-in", key: "a/b c%20d.mp4" });
    expect(formatS3Uri(parseS3Uri("s3://media-in/x/"))).toBe("s3://media-in/x/");
  });

  it.each([
    ["no key", "s3://media-in"],
    ["an empty key", "s3://media-in/"],
    ["an upper-case bucket", "s3://Media/key"],
    ["a two-letter bucket", "s3://ab/key"],
    ["another scheme", "https://media-in/key"],
  ])("refuses %s", (_label, uri) => {
    expect(() => parseS3Uri(uri)).toThrow(/not an s3:\/\/bucket\/key URI/);
  });
});

describe("copySource", () => {
  it("percent-encodes each key segment and keeps the slashes", () => {
    expect(copySource({ bucket: "b-1", key: "jobs/1/a b+c#.mp4" })).toBe("b-1/jobs/1/a%20b%2Bc%23.mp4");
  });
});

describe("createS3Client", () => {
  it("takes the checksum mode and path style from the settings, and makes one attempt per send", async () => {
    const client = createS3Client({
      endpoint: "http://127.0.0.1:9000",
      region: "eu-west-1",
      accessKeyId: "id",
      secretAccessKey: "secret",
      forcePathStyle: true,
      checksums: "WHEN_REQUIRED",
    });
    expect(await client.config.requestChecksumCalculation()).toBe("WHEN_REQUIRED");
    expect(await client.config.responseChecksumValidation()).toBe("WHEN_REQUIRED");
    expect(client.config.forcePathStyle).toBe(true);
    expect(await client.config.maxAttempts()).toBe(1);
    expect(await client.config.region()).toBe("eu-west-1");
    expect(await client.config.credentials()).toMatchObject({ accessKeyId: "id", secretAccessKey: "secret" });
    client.destroy();
  });

  it("passes WHEN_SUPPORTED through for stores that take aws-chunked bodies", async () => {
    const client = createS3Client({
      endpoint: "https://s3.eu-west-1.amazonaws.com",
      region: "eu-west-1",
      accessKeyId: "id",
      secretAccessKey: "secret",
      forcePathStyle: false,
      checksums: "WHEN_SUPPORTED",
    });
    expect(await client.config.requestChecksumCalculation()).toBe("WHEN_SUPPORTED");
    expect(client.config.forcePathStyle).toBe(false);
    client.destroy();
  });
});
