import { z } from "@hono/zod-openapi";
import { pendingIdentifierChanges, verifyIdentifierChange } from "../identity/accounts/identifier-changes.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { ApiError, validationError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { AccountIdentifiersSchema, IDENTIFIERS_EXAMPLE, identifiersBody } from "./identifiers-schema.ts";
import { identifierRequester } from "./update-identifiers.ts";

export const IdentifierVerificationSchema = z
  .object({
    changeId: z.uuid().openapi({
      description: "The pending change's id (`pendingChanges[].id` of PATCH /api/v1/me/identifiers)",
      example: "3f8e2b1c-7a4d-4c2e-9b6f-1d2e3f4a5b6c",
    }),
    code: z.string().min(1).max(64).openapi({
      description:
        "The 6-digit code sent to the new identifier; Persian and Arabic-Indic digits, spaces and hyphens are accepted",
      example: "493027",
    }),
  })
  .openapi("IdentifierVerification");

export const verifyIdentifierRoute = accountRoute({
  method: "post",
  path: "/me/identifiers/verifications",
  tags: ["account"],
  summary: "Verify the code of a pending identifier change, applying it",
  operationId: "verifyIdentifier",
  description:
    "Needs no recent sign-in of its own: the change it applies was requested with one, and the code may take longer to arrive than that window lasts. Each try counts (5 per code, counted before the code is compared, so concurrent tries get no more). A right code applies the change once: the identifier is stored verified and the e-mail address the account had is told. A code used, cancelled, replaced by a newer request, or another account's answers 404. Two accounts verifying one identifier at once: one gets it, the other 409 `identifier.taken`.",
  request: {
    ...jsonBody(IdentifierVerificationSchema, {
      changeId: "3f8e2b1c-7a4d-4c2e-9b6f-1d2e3f4a5b6c",
      code: "493027",
    }),
  },
  responses: {
    200: jsonResponse("The change is applied: the account's identifiers now", AccountIdentifiersSchema, {
      ...IDENTIFIERS_EXAMPLE,
      email: "ada@new.example",
      pendingChanges: [],
    }),
  },
  errors: [...BODY_ERRORS, "identifier.change_not_found", "identifier.change_expired", "identifier.taken"],
});

export const verifyIdentifier =
  (deps: AccountDeps): AppRouteHandler<typeof verifyIdentifierRoute> =>
  async (c) => {
    const principal = c.get("account");
    const body = c.req.valid("json");
    const requester = identifierRequester(principal, c.req.header("accept-language"));
    const outcome = await verifyIdentifierChange(deps, requester, body);
    switch (outcome.outcome) {
      case "verified":
        deps.logger.info("identifier change verified", {
          requestId: c.get("requestId"),
          accountId: principal.accountId,
          changeId: body.changeId,
        });
        return c.json(
          identifiersBody(outcome.identifiers, await pendingIdentifierChanges(deps.sql, principal.accountId)),
          200,
        );
      case "code-wrong":
        throw validationError([
          {
            path: "code",
            message: `the code is wrong; ${outcome.triesLeft} ${outcome.triesLeft === 1 ? "try" : "tries"} left`,
            code: "identifier.code_invalid",
          },
        ]);
      case "not-found":
        throw new ApiError("identifier.change_not_found", "the account has no pending change with this id");
      case "expired":
        throw new ApiError(
          "identifier.change_expired",
          "this change's code has expired or its tries are spent: request a new code",
        );
      case "taken":
        throw new ApiError("identifier.taken", "another account has this identifier now");
    }
  };
