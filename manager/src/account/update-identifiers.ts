import {
  accountIdentifiers,
  type ChangeRequestOutcome,
  type IdentifierChannel,
  type IdentifierRequester,
  pendingIdentifierChanges,
  removePhone,
  requestIdentifierChange,
} from "../identity/accounts/identifier-changes.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import type { AccountPrincipal } from "../identity/tokens/principals.ts";
import { requireRecentAuthenticationFor } from "../identity/tokens/recent-authentication.ts";
import { ApiError, validationError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import {
  AccountIdentifiersSchema,
  IDENTIFIERS_EXAMPLE,
  IdentifiersUpdateSchema,
  identifiersBody,
  typedIdentifiers,
} from "./identifiers-schema.ts";

export const updateIdentifiersRoute = accountRoute({
  method: "patch",
  path: "/me/identifiers",
  tags: ["account"],
  summary: "Change the account's e-mail address or phone number",
  operationId: "updateIdentifiers",
  description:
    "Needs a sign-in within REAUTHENTICATION_MAX_AGE_SECONDS (403 `auth.reauthentication_required` names the `max_age` to sign in again with). A new e-mail address or phone number takes effect only once the 6-digit code sent to it (by e-mail, or SMS) is verified with `POST /api/v1/me/identifiers/verifications`; the code works 10 minutes and 5 tries, and a new request for the same channel voids the previous code. `phone: null` removes the phone at once. The e-mail address the account had is told of every change. With both fields, e-mail is handled first: a refusal of the phone leaves the e-mail change pending.",
  request: {
    ...jsonBody(IdentifiersUpdateSchema, { email: "ada@new.example" }),
  },
  responses: {
    200: jsonResponse(
      "The account's identifiers, with the changes now waiting for their code",
      AccountIdentifiersSchema,
      IDENTIFIERS_EXAMPLE,
    ),
  },
  errors: [
    ...BODY_ERRORS,
    "auth.reauthentication_required",
    "identifier.taken",
    "identifier.delivery_unavailable",
  ],
});

function refusal(channel: IdentifierChannel, outcome: Exclude<ChangeRequestOutcome, { outcome: "pending" }>) {
  switch (outcome.outcome) {
    case "taken":
      return new ApiError(
        "identifier.taken",
        `another account has this ${channel === "email" ? "e-mail address" : "phone number"}`,
      );
    case "unchanged":
      return validationError([
        {
          path: channel,
          message: "the account already has this identifier, verified",
          code: "identifier.unchanged",
        },
      ]);
    case "channel-unavailable":
      return new ApiError(
        "identifier.delivery_unavailable",
        `no ${channel === "email" ? "e-mail" : "SMS"} transport is configured, so no code can be sent`,
      );
    case "unknown-account":
      return new ApiError("auth.token_revoked", "the token's account no longer exists or is disabled");
  }
}

export function identifierRequester(
  principal: AccountPrincipal,
  acceptLanguage: string | undefined,
): IdentifierRequester {
  return { accountId: principal.accountId, clientId: principal.clientId, acceptLanguage };
}

export const updateIdentifiers =
  (deps: AccountDeps): AppRouteHandler<typeof updateIdentifiersRoute> =>
  async (c) => {
    const principal = c.get("account");
    await requireRecentAuthenticationFor(
      deps.sql,
      { event: "account.identifier-change-requested" },
      principal,
      deps.reauthenticationMaxAgeSeconds,
    );
    const { email, phone } = typedIdentifiers(c.req.valid("json"));
    const requester = identifierRequester(principal, c.req.header("accept-language"));
    const requests: [IdentifierChannel, string | null | undefined][] = [
      ["email", email],
      ["phone", phone],
    ];
    for (const [channel, identifier] of requests) {
      if (identifier === undefined) continue;
      if (identifier === null) {
        await removePhone(deps, requester);
        continue;
      }
      const outcome = await requestIdentifierChange(deps, requester, { channel, identifier });
      if (outcome.outcome !== "pending") throw refusal(channel, outcome);
      deps.logger.info("identifier change requested", {
        requestId: c.get("requestId"),
        accountId: principal.accountId,
        channel,
        changeId: outcome.change.id,
      });
    }
    const identifiers = await accountIdentifiers(deps.sql, principal.accountId);
    if (!identifiers) throw refusal("email", { outcome: "unknown-account" });
    return c.json(
      identifiersBody(identifiers, await pendingIdentifierChanges(deps.sql, principal.accountId)),
      200,
    );
  };
