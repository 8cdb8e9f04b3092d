import { z } from "@hono/zod-openapi";
import { AVATAR_STORED_TYPE } from "../identity/accounts/index.ts";
import { rememberedAccounts } from "../identity/sessions/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { answerAvatar } from "./avatar-answer.ts";
import type { AccountDeps } from "./deps.ts";
import { currentSessionUid } from "./sessions-schema.ts";

export const readRememberedAvatarRoute = accountRoute({
  method: "get",
  path: "/me/accounts/{accountId}/avatar",
  operationId: "readRememberedAccountAvatar",
  tags: ["account"],
  summary: "Read the avatar of an account remembered in this browser",
  description:
    "The avatar (a 256 × 256 WebP) of one of the accounts GET /api/v1/me/accounts lists, whose `avatarUrl` names this route with a version that changes with the avatar. Any other account, remembered in another browser or not at all, answers 404 `avatar.not_found`, the same as one without an avatar.",
  request: {
    params: z.object({
      accountId: z.uuid().openapi({
        param: { name: "accountId", in: "path" },
        example: "3b241101-e2bb-4255-8caf-4136c566a962",
      }),
    }),
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

export const readRememberedAvatarHandler =
  (deps: AccountDeps): AppRouteHandler<typeof readRememberedAvatarRoute> =>
  async (c) => {
    const { accountId } = c.req.valid("param");
    const current = await currentSessionUid(deps.sql, c.get("account"));
    const remembered = (await rememberedAccounts(deps.sql, current)).find(
      (account) => account.accountId === accountId,
    );
    if (!remembered?.avatarKey) throw new ApiError("avatar.not_found", "no remembered account's avatar here");
    return answerAvatar(c, deps, remembered.avatarKey);
  };
