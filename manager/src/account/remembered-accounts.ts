import { z } from "@hono/zod-openapi";
import { rememberedAccounts } from "../identity/sessions/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { versionedAvatarUrl } from "./profile-schema.ts";
import { currentSessionUid, RememberedAccountSchema, rememberedAvatarPath } from "./sessions-schema.ts";

const RememberedAccountListSchema = z
  .object({
    accounts: z.array(RememberedAccountSchema).openapi({ description: "The current account first" }),
  })
  .openapi("RememberedAccountList");

export const rememberedAccountsRoute = accountRoute({
  method: "get",
  path: "/me/accounts",
  tags: ["account"],
  summary: "List the accounts remembered in this browser",
  operationId: "listMyRememberedAccounts",
  description:
    "The accounts that signed in to the built-in provider in the browser holding the token's session (each with a session of its own there), for an account switcher (each with its avatar's URL): the current account first, then in the order they signed in. `signedIn` is false for one whose session there expired. Only the current account when the browser was not recorded.",
  responses: {
    200: jsonResponse("The remembered accounts", RememberedAccountListSchema, {
      accounts: [
        {
          id: "3b241101-e2bb-4255-8caf-4136c566a962",
          name: "Ada Lovelace",
          email: "ada@example.com",
          avatarUrl:
            "/api/v1/me/accounts/3b241101-e2bb-4255-8caf-4136c566a962/avatar?v=0d6c2f7e-1b9a-4f3e-8c2d-5a7b9e1f3c4d",
          signedIn: true,
          current: true,
        },
        {
          id: "9c5b94b1-35ad-49bb-b118-8e8fc24abf80",
          name: "Ada (work)",
          email: "ada@work.example",
          avatarUrl: null,
          signedIn: false,
          current: false,
        },
      ],
    }),
  },
  errors: [],
});

export const rememberedAccountsHandler =
  (deps: AccountDeps): AppRouteHandler<typeof rememberedAccountsRoute> =>
  async (c) => {
    const current = await currentSessionUid(deps.sql, c.get("account"));
    const accounts = await rememberedAccounts(deps.sql, current);
    return c.json(
      {
        accounts: accounts.map((account) => ({
          id: account.accountId,
          name: account.displayName,
          email: account.email,
          avatarUrl: versionedAvatarUrl(rememberedAvatarPath(account.accountId), account.avatarKey),
          signedIn: account.signedIn,
          current: account.current,
        })),
      },
      200,
    );
  };
