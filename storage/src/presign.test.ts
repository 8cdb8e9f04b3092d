import { describe, expect, it } from "vitest";
import { createS3Client } from "./client.ts";
import { presignGet } from "./presign.ts";

const client = createS3Client({
  endpoint: "http://127.0.0.1:9000",
  region: "eu-west-1",
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "secret",
  forcePathStyle: true,
  checksums: "WHEN_REQUIRED",
});

describe("presignGet", () => {
  it("signs a path-style GET of the key for the given lifetime, with the key's segments percent-encoded", async () => {
    const url = new URL(await presignGet(client, "s3://media-out/movies/42/a b+c.mp4", 300));
    expect(url.origin).toBe("http://127.0.0.1:9000");
    expect(url.pathname).toBe("/media-out/movies/42/a%20b%2Bc.mp4");
    expect(url.searchParams.get("X-Amz-Algorithm")).toBe("AWS4-HMAC-SHA256");
    expect(url.searchParams.get("X-Amz-Expires")).toBe("300");
    expect(url.searchParams.get("X-Amz-Credential")).toMatch(
      /^AKIDEXAMPLE\/\d{8}\/eu-west-1\/s3\/aws4_request$/,
    );
    expect(url.searchParams.get("X-Amz-SignedHeaders")).toBe("host");
    expect(url.searchParams.get("X-Amz-Signature")).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([0, 1.5, 7 * 24 * 3600 + 1])(
    "refuses a lifetime of %s s (SigV4 allows 1 s to 7 days)",
    (seconds) => {
      expect(() => presignGet(client, "s3://media-out/a.mp4", seconds)).toThrow(RangeError);
    },
  );

  it("refuses a location that is not s3://bucket/key", () => {
    expect(() => presignGet(client, "https://media-out/a.mp4", 60)).toThrow(/not an s3:\/\/bucket\/key URI/);
  });
});
