/**
 * A private S3-compatible server for a test file, the demo or a bench run: s3rver in this
 * process, on a loopback port the OS picks, storing under a temp directory that stop()
 * removes. What s3rver 3.7.1 lacks:
 * ListParts and AbortMultipartUpload (405), ListMultipartUploads and UploadPartCopy (501),
 * ListObjectsV2 paging on Node 20 (its continuation token needs a cipher OpenSSL 3 dropped:
 * 500), and V4 signature checks (a wrong secret is accepted; an unknown access key is not).
 */
import { mkdtemp, rm, stat } from "node:fs/promises";
import type { Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateBucketCommand, S3Client, type S3ClientConfig } from "@aws-sdk/client-s3";
import type { StorageSettings } from "@tjm/protocol";

/** s3rver's one built-in account. */
export const S3RVER_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } as const;

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: Server;
}

// s3rver is CommonJS and ships no types; this is the part of it we use.
type S3rverConstructor = new (options: {
  port: number;
  address: string;
  silent: boolean;
  directory: string;
  configureBuckets?: { name: string }[];
}) => S3rverInstance;

const S3rver = createRequire(import.meta.url)("s3rver") as S3rverConstructor;

export interface S3Server {
  endpoint: string;
  port: number;
  /** Where s3rver keeps its objects (`<directory>/<bucket>/<key>._S3rver_object`). */
  directory: string;
  settings: StorageSettings;
  createBucket(name: string): Promise<void>;
  /**
   * The size of the object's file on s3rver's disk, read past the S3 API: it shows whether
   * s3rver stored the body as sent (aws-chunked framing would make it larger).
   */
  storedBytes(bucket: string, key: string): Promise<number>;
  /** A client for seeding and reading back; `overrides` e.g. point it at a proxy. */
  client(overrides?: Partial<S3ClientConfig>): S3Client;
  stop(): Promise<void>;
}

export async function startS3(options: { buckets?: string[] } = {}): Promise<S3Server> {
  const directory = await mkdtemp(join(tmpdir(), "tjm-s3-"));
  const server = new S3rver({
    port: 0,
    address: "127.0.0.1",
    silent: true,
    directory,
    configureBuckets: (options.buckets ?? []).map((name) => ({ name })),
  });
  let address: AddressInfo;
  try {
    address = await server.run();
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  const endpoint = `http://127.0.0.1:${address.port}`;
  const settings: StorageSettings = {
    endpoint,
    region: "us-east-1",
    ...S3RVER_CREDENTIALS,
    forcePathStyle: true,
    checksums: "WHEN_REQUIRED",
  };
  const clients: S3Client[] = [];
  const client = (overrides: Partial<S3ClientConfig> = {}) => {
    const created = new S3Client({
      endpoint,
      region: settings.region,
      forcePathStyle: true,
      credentials: S3RVER_CREDENTIALS,
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      ...overrides,
    });
    clients.push(created);
    return created;
  };
  const admin = client();
  return {
    endpoint,
    port: address.port,
    directory,
    settings,
    client,
    async createBucket(name) {
      await admin.send(new CreateBucketCommand({ Bucket: name }));
    },
    async storedBytes(bucket, key) {
      const parts = key.split("/");
      const name = `${parts.pop()}._S3rver_object`;
      return (await stat(join(directory, bucket, ...parts, name))).size;
    },
    async stop() {
      for (const created of clients) created.destroy();
      try {
        // Keep-alive sockets (ours and the tests' clients) would hold close() open.
        server.httpServer?.closeAllConnections();
        await server.close();
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    },
  };
}
