import { z } from "@hono/zod-openapi";
import { cancelIdentifierChange } from "../identity/accounts/identifier-changes.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { uuidPathParam } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { identifierRequester } from "./update-identifiers.ts";

export const cancelIdentifierChangeRoute = accountRoute({
  method: "delete",
  path: "/me/identifiers/changes/{changeId}",
  tags: ["account"],
  summary: "Cancel a pending identifier change",
  operationId: "cancelIdentifierChange",
  description:
    "Its code proves nothing from now on; the account's identifiers stay as they are. Another account's change answers 404, as an unknown one does. Needs no recent sign-in: cancelling only takes back what the account asked for.",
  request: {
    params: z.object({ changeId: uuidPathParam("changeId", "3f8e2b1c-7a4d-4c2e-9b6f-1d2e3f4a5b6c") }),
  },
  responses: { 204: { description: "Cancelled" } },
  errors: ["identifier.change_not_found"],
});

export const cancelIdentifierChangeHandler =
  (deps: AccountDeps): AppRouteHandler<typeof cancelIdentifierChangeRoute> =>
  async (c) => {
    const principal = c.get("account");
    const { changeId } = c.req.valid("param");
    const requester = identifierRequester(principal, c.req.header("accept-language"));
    if ((await cancelIdentifierChange(deps.sql, requester, changeId)) === "not-found") {
      throw new ApiError("identifier.change_not_found", "the account has no pending change with this id");
    }
    return c.body(null, 204);
  };
