import { describe, expect, it } from "vitest";
import { createS3Client } from "./client.ts";

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
