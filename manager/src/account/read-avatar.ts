import { z } from "@hono/zod-openapi";
import { InputNotFoundError, StorageRefusedError, StorageUnavailableError } from "@tjm/storage";
import { AVATAR_STORED_TYPE, findProfile, readAvatar } from "../identity/accounts/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import type { AccountDeps } from "./deps.ts";

export const readAvatarRoute = accountRoute({
  method: "get",
  path: "/me/profile/avatar",
  operationId: "readAvatar",
  tags: ["account"],
  summary: "Read the account's avatar",
  description:
    "The avatar as stored: a 256 × 256 WebP made by the Manager from the uploaded file. The snapshot's avatarUrl names this route with a version (`v`) that changes with the avatar, so a cached copy is kept as long as its URL stands.",
  request: {
    query: z.object({ v: z.string().max(100).optional().openapi({ description: "The avatar's version" }) }),
  },
  responses: {
    200: {
      description: "The avatar",
      content: { [AVATAR_STORED_TYPE]: { schema: z.string().openapi({ format: "binary" }) } },
    },
  },
  errors: ["avatar.not_found", "dependency.unavailable"],
});

export const readAvatarHandler =
  (deps: AccountDeps): AppRouteHandler<typeof readAvatarRoute> =>
  async (c) => {
    const profile = await findProfile(deps.sql, c.get("account").accountId);
    if (!profile?.avatarKey) throw new ApiError("avatar.not_found", "the account has no avatar");
    let bytes: Uint8Array;
    try {
      bytes = await readAvatar(deps.avatars, profile.avatarKey);
    } catch (error) {
      if (error instanceof InputNotFoundError)
        throw new ApiError("avatar.not_found", "the avatar is not in storage");
      if (error instanceof StorageUnavailableError || error instanceof StorageRefusedError) {
        throw new ApiError("dependency.unavailable", "the avatar cannot be read from storage now");
      }
      throw error;
    }
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
      "content-type": AVATAR_STORED_TYPE,
      // Private: one account's picture, behind its token; the versioned URL changes with it.
      "cache-control": "private, max-age=86400",
    });
  };
