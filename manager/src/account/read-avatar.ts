import { z } from "@hono/zod-openapi";
import { AVATAR_STORED_TYPE, findProfile } from "../identity/accounts/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { answerAvatar } from "./avatar-answer.ts";
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
    return answerAvatar(c, deps, profile.avatarKey);
  };
