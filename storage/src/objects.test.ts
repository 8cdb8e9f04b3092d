/**
 * Paging in deletePrefix. s3rver cannot page ListObjectsV2 on Node 20 (its continuation token
 * uses a cipher OpenSSL 3 dropped), so paging is checked against a scripted client that
 * answers like S3; one-page deletes run against s3rver in tests/storage/objects.test.ts.
 */
import { DeleteObjectCommand, ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import { describe, expect, it } from "vitest";
import { deletePrefix } from "./objects.ts";

function pagedClient(pages: string[][]) {
  const deleted: string[] = [];
  const tokens: (string | undefined)[] = [];
  const client = {
    async send(command: { input: Record<string, unknown> }) {
      if (command instanceof ListObjectsV2Command) {
        const token = command.input.ContinuationToken as string | undefined;
        tokens.push(token);
        const index = token ? Number(token) : 0;
        const last = index === pages.length - 1;
        return {
          Contents: (pages[index] ?? []).map((Key) => ({ Key })),
          IsTruncated: !last,
          NextContinuationToken: last ? undefined : String(index + 1),
        };
      }
      if (command instanceof DeleteObjectCommand) {
        deleted.push(command.input.Key as string);
        return {};
      }
      throw new Error("unexpected command");
    },
  };
  return { client: client as unknown as S3Client, deleted, tokens };
}

describe("deletePrefix paging (scripted client)", () => {
  it("follows continuation tokens until the listing is complete", async () => {
    const { client, deleted, tokens } = pagedClient([["p/1", "p/2"], ["p/3", "p/4"], ["p/5"]]);
    expect(await deletePrefix(client, "s3://bucket/p/")).toBe(5);
    expect(tokens).toEqual([undefined, "1", "2"]);
    expect(deleted.sort()).toEqual(["p/1", "p/2", "p/3", "p/4", "p/5"]);
  });

  it("an empty prefix listing deletes nothing", async () => {
    const { client, deleted } = pagedClient([[]]);
    expect(await deletePrefix(client, "s3://bucket/p/")).toBe(0);
    expect(deleted).toEqual([]);
  });
});
