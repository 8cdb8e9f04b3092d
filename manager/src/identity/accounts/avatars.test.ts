import type { S3Client } from "@aws-sdk/client-s3";
import { createLogger } from "@tjm/platform";
import { describe, expect, it } from "vitest";
import { deleteAvatarsOf } from "./avatars.ts";

describe("deleteAvatarsOf", () => {
  it("logs each prefix storage refused and goes on: the account's deletion stands", async () => {
    const lines: string[] = [];
    const refusing = {
      send: async () => {
        throw Object.assign(new Error("Access Denied"), {
          name: "AccessDenied",
          $metadata: { httpStatusCode: 403 },
        });
      },
    } as unknown as S3Client;
    const accountId = "3b241101-e2bb-4255-8caf-4136c566a962";
    await deleteAvatarsOf(
      { client: () => refusing, bucket: "tjm-avatars" },
      accountId,
      createLogger("debug", (line) => lines.push(line)),
    );
    const logged = lines.map((line) => JSON.parse(line) as { level: string; msg?: string; prefix?: string });
    expect(logged.filter((line) => line.level === "error").map((line) => line.prefix)).toEqual([
      `s3://tjm-avatars/avatars/${accountId}/`,
      `s3://tjm-avatars/avatar-staging/${accountId}/`,
    ]);
  });
});
