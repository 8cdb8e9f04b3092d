import type { AddressInfo } from "node:net";
import { createServer, type Socket } from "node:net";
import { PutObjectCommand } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { createS3Client, fetchDeadlineMs } from "./client.ts";
import { classifyStorageError } from "./errors.ts";

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

describe('the "fetch" transport', () => {
  const settings = (endpoint: string) => ({
    endpoint,
    region: "us-east-1",
    accessKeyId: "id",
    secretAccessKey: "secret",
    forcePathStyle: true,
    checksums: "WHEN_REQUIRED" as const,
  });

  it("gives a request the timeouts plus its body at 256 KiB/s", () => {
    expect(fetchDeadlineMs(0)).toBe(35_000);
    expect(fetchDeadlineMs(32 * 1024 * 1024)).toBe(35_000 + 128_000);
    expect(fetchDeadlineMs(1024, { connectionTimeoutMs: 100, socketTimeoutMs: 200 })).toBe(304);
  });

  it("aborts a request the store never answers at its deadline, as a recoverable TimeoutError", async () => {
    const sockets: Socket[] = [];
    const closed: Promise<void>[] = [];
    // Takes the request and says nothing.
    const server = createServer((socket) => {
      sockets.push(socket);
      socket.resume();
      closed.push(new Promise((resolve) => socket.once("close", () => resolve())));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const client = createS3Client(
      settings(`http://127.0.0.1:${port}`),
      { connectionTimeoutMs: 100, socketTimeoutMs: 200 },
      "fetch",
    );
    try {
      const started = performance.now();
      const error = await client
        .send(new PutObjectCommand({ Bucket: "b", Key: "k", Body: new Uint8Array(1024) }))
        .catch((caught: unknown) => caught);
      const elapsed = performance.now() - started;
      expect(classifyStorageError(error)).toBe("recoverable");
      expect(elapsed).toBeGreaterThanOrEqual(290);
      expect(elapsed).toBeLessThan(2_000);
      // Aborted, not merely given up on: the connection is gone.
      await Promise.all(closed);
      expect(sockets.length).toBe(1);
    } finally {
      client.destroy();
      server.close();
    }
  });
});
