/**
 * The nested collections under /clients/{client}: what each is for TJM, its body and its
 * DELETE path's parameter. Every collection is a set of keys; the routes of each kind are in
 * their own files (resources-*, roles-*, users-*, directory-sources-*).
 */
import { z } from "@hono/zod-openapi";
import {
  CLIENT_ROLES,
  DIRECTORY_SOURCES,
  NestedEntryNotFoundError,
  UnknownAccountForClientError,
} from "../identity/clients/index.ts";
import { ApiError } from "../platform/errors.ts";
import { ClientParamsSchema, REFERENCE, ResourceKeyParamsSchema } from "./schema.ts";

export const ClientCollectionSchema = z
  .object({ items: z.array(z.string()).openapi({ example: ["client-admin"] }) })
  .openapi("ClientCollection");

export const ResourceBodySchema = z
  .object({
    resource: z
      .string()
      .min(1)
      .max(200)
      .regex(REFERENCE, "must be a resource's audience")
      .openapi({ example: "account-portal" }),
  })
  .openapi("ClientResourceAdd");
export const RoleBodySchema = z.object({ role: z.enum(CLIENT_ROLES) }).openapi("ClientRoleAdd");
export const UserBodySchema = z
  .object({ accountId: z.uuid().openapi({ example: "0b6f3c1e-9a2d-4e8b-8c7f-5d1a2b3c4d5e" }) })
  .openapi("ClientUserAdd");
export const DirectorySourceBodySchema = z
  .object({ source: z.enum(DIRECTORY_SOURCES) })
  .openapi("ClientDirectorySourceAdd");

export const ResourceParamsSchema = ResourceKeyParamsSchema;
export const RoleParamsSchema = ClientParamsSchema.extend({
  role: z.enum(CLIENT_ROLES).openapi({ param: { name: "role", in: "path" }, example: "client-admin" }),
});
export const UserParamsSchema = ClientParamsSchema.extend({
  account_id: z
    .uuid()
    .openapi({ param: { name: "account_id", in: "path" }, example: "0b6f3c1e-9a2d-4e8b-8c7f-5d1a2b3c4d5e" }),
});
export const DirectorySourceParamsSchema = ClientParamsSchema.extend({
  source: z.enum(DIRECTORY_SOURCES).openapi({ param: { name: "source", in: "path" }, example: "built-in" }),
});

/** What each collection means, in every route's description. */
export const COLLECTION_MEANING = {
  resources:
    "The protected resources (TJM's four audiences) the client may get tokens for: the resource keys of its oauth-grants (one table, two views). A resource not listed is refused by the provider with `invalid_target`.",
  roles:
    "The account roles its tokens may carry: an access token's `roles` claim is the account's roles ∩ these (empty: no roles). A role not listed never appears in its tokens.",
  users:
    "The accounts that may use the client (empty: every account). Any other account is refused by the provider with `access_denied` (at authorization; `invalid_grant` at refresh).",
  "directory-sources":
    "The identity sources its accounts may come from (empty: every source): `built-in` (TJM's own accounts, signing in at its provider) and `operator-issuer` (OIDC_OPERATOR_ISSUER_URL). A list without `built-in` makes the provider refuse TJM's accounts with `access_denied`.",
} as const;

export const CHANGE_EFFECT =
  "Bumps the client's authorization version in the same transaction (tokens issued before are refused on their next request) and writes one audit row; adding a key already there or removing one absent changes nothing else.";

/** The domain's refusals of a nested change. */
export function nestedApiError(err: unknown): unknown {
  if (err instanceof NestedEntryNotFoundError) {
    return new ApiError("client.entry_not_found", "the client's collection does not hold this key");
  }
  if (err instanceof UnknownAccountForClientError) {
    return new ApiError("validation.failed", "Validation failed", [
      { path: "accountId", message: "no account has this id", code: "client.account_unknown" },
    ]);
  }
  return err;
}
