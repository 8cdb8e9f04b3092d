/**
 * The classification of errors captured from real sources: s3rver's answers, a closed port,
 * a server that accepts and never answers, one that drops the connection, and a gateway that
 * answers 503 SlowDown or a 502 HTML page. s3rver does not verify V4 signatures, so
 * SignatureDoesNotMatch is covered by the unit tests only.
 */
import http from "node:http";
import net from "node:net";
import {
  AbortMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { type S3Server, startS3 } from "@tjm/devstack/s3rver";
import { freePort } from "@tjm/devstack/services";
import { classifyStorageError, createS3Client } from "@tjm/storage";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const BUCKET = "errors";
let s3: S3Server;
let client: S3Client;
const servers: (net.Server | http.Server)[] = [];
const sockets = new Set<net.Socket>();

beforeAll(async () => {
  s3 = await startS3({ buckets: [BUCKET] });
  client = createS3Client(s3.settings);
});

afterAll(async () => {
  client?.destroy();
  for (const socket of sockets) socket.destroy();
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  await s3?.stop();
});

async function captured(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("the request succeeded");
}

async function listen<T extends net.Server | http.Server>(
  server: T,
): Promise<{ server: T; endpoint: string }> {
  server.on("connection", (socket: net.Socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return { server, endpoint: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}` };
}

function clientFor(endpoint: string, socketTimeoutMs = 2_000): S3Client {
  return createS3Client({ ...s3.settings, endpoint }, { connectionTimeoutMs: 1_000, socketTimeoutMs });
}

describe("errors from s3rver", () => {
  it("GetObject of a missing key is no-such-key", async () => {
    const error = await captured(client.send(new GetObjectCommand({ Bucket: BUCKET, Key: "none" })));
    expect(error).toMatchObject({ name: "NoSuchKey", $metadata: { httpStatusCode: 404 } });
    expect(classifyStorageError(error)).toBe("no-such-key");
  });

  it("HeadObject of a missing key (a bodiless 404) is no-such-key", async () => {
    const error = await captured(client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: "none" })));
    expect(error).toMatchObject({ name: "NotFound" });
    expect(classifyStorageError(error)).toBe("no-such-key");
  });

  it("a missing bucket is no-such-bucket", async () => {
    const error = await captured(
      client.send(new CreateMultipartUploadCommand({ Bucket: "nope-bucket", Key: "k" })),
    );
    expect(error).toMatchObject({ name: "NoSuchBucket", $metadata: { httpStatusCode: 404 } });
    expect(classifyStorageError(error)).toBe("no-such-bucket");
  });

  it("an unknown access key is access-denied", async () => {
    const stranger = createS3Client({ ...s3.settings, accessKeyId: "NOBODY" });
    const error = await captured(stranger.send(new GetObjectCommand({ Bucket: BUCKET, Key: "none" })));
    expect(error).toMatchObject({ name: "InvalidAccessKeyId", $metadata: { httpStatusCode: 403 } });
    expect(classifyStorageError(error)).toBe("access-denied");
    stranger.destroy();
  });

  it("AbortMultipartUpload (405) and ListMultipartUploads (501) are fatal, not retried", async () => {
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: BUCKET, Key: "k" }));
    const abort = await captured(
      client.send(new AbortMultipartUploadCommand({ Bucket: BUCKET, Key: "k", UploadId })),
    );
    expect(abort).toMatchObject({ name: "MethodNotAllowed", $metadata: { httpStatusCode: 405 } });
    expect(classifyStorageError(abort)).toBe("fatal");
    const list = await captured(client.send(new ListMultipartUploadsCommand({ Bucket: BUCKET })));
    expect(list).toMatchObject({ name: "NotImplemented", $metadata: { httpStatusCode: 501 } });
    expect(classifyStorageError(list)).toBe("fatal");
  });
});

describe("errors from the network", () => {
  it("a closed port is ECONNREFUSED, recoverable", async () => {
    const closed = clientFor(`http://127.0.0.1:${await freePort()}`);
    const error = await captured(closed.send(new GetObjectCommand({ Bucket: BUCKET, Key: "k" })));
    expect(error).toMatchObject({ code: "ECONNREFUSED" });
    expect(classifyStorageError(error)).toBe("recoverable");
    closed.destroy();
  });

  it("a server that accepts and never answers hits the socket timeout, recoverable", async () => {
    const { endpoint } = await listen(net.createServer(() => {}));
    const silent = clientFor(endpoint, 300);
    const started = Date.now();
    const error = await captured(silent.send(new GetObjectCommand({ Bucket: BUCKET, Key: "k" })));
    expect(error).toMatchObject({ name: "TimeoutError" });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(classifyStorageError(error)).toBe("recoverable");
    silent.destroy();
  });

  it("a connection dropped before the answer is ECONNRESET, recoverable", async () => {
    const { endpoint } = await listen(
      net.createServer((socket) => socket.once("data", () => socket.destroy())),
    );
    const dropped = clientFor(endpoint);
    const error = await captured(dropped.send(new GetObjectCommand({ Bucket: BUCKET, Key: "k" })));
    expect(error).toMatchObject({ code: "ECONNRESET" });
    expect(classifyStorageError(error)).toBe("recoverable");
    dropped.destroy();
  });

  it.each([
    [
      503,
      "application/xml",
      "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>",
    ],
    [500, "application/xml", "<Error><Code>InternalError</Code><Message>Try again.</Message></Error>"],
    [502, "text/html", "<html><body>502 Bad Gateway</body></html>"],
  ])("a gateway answering %i (%s) is recoverable", async (status, type, body) => {
    const { endpoint } = await listen(
      http.createServer((request, response) => {
        request.resume();
        response.writeHead(status, { "content-type": type }).end(body);
      }),
    );
    const gateway = clientFor(endpoint);
    const error = await captured(gateway.send(new GetObjectCommand({ Bucket: BUCKET, Key: "k" })));
    expect(error).toMatchObject({ $metadata: { httpStatusCode: status } });
    expect(classifyStorageError(error)).toBe("recoverable");
    gateway.destroy();
  });
});
