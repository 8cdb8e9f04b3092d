import { z } from "@hono/zod-openapi";
import { findClient, setGrant } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { BODY_ERRORS, jsonBody, jsonResponse } from "../platform/routes.ts";
import type { ManagementDeps } from "./deps.ts";
import { auditedChange } from "./errors.ts";
import { ClientGrantSchema, ResourceKeyParamsSchema } from "./schema.ts";

const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

export const SetGrantSchema = z
  .object({
    scopes: z
      .array(z.string().min(1).max(100).regex(SCOPE, "must be a scope token (RFC 6749 §3.3)"))
      .max(50)
      .openapi({
        description:
          "Scopes beyond `access` its tokens for the resource may carry; [] for the resource alone",
        example: [],
      }),
  })
  .openapi("SetGrant");

export const GrantChangeSchema = ClientGrantSchema.extend({
  authorizationVersion: z.number().int().openapi({ example: 4 }),
}).openapi("ClientGrantChange");

export const setGrantRoute = clientAdminRoute({
  method: "put",
  path: "/management/clients/{client}/oauth-grants/{resource_key}",
  tags: ["clients"],
  summary: "Set a client's grant of a protected resource",
  operationId: "setClientGrant",
  description:
    "Creates or replaces the grant. A change bumps the client's authorization version in the same transaction: every token issued before is refused on its next request, on every Manager, and at the provider's refresh, introspection and userinfo. Setting the grant it already has changes nothing. An unknown resource_key is 400 `client.resource_unknown`.",
  request: { params: ResourceKeyParamsSchema, ...jsonBody(SetGrantSchema, { scopes: [] }) },
  responses: {
    200: jsonResponse("The grant, and the client's authorization version now", GrantChangeSchema),
  },
  errors: [...BODY_ERRORS, "client.not_found"],
});

export const setGrantHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof setGrantRoute> =>
  async (c) => {
    const { client: reference, resource_key: resource } = c.req.valid("param");
    const { scopes } = c.req.valid("json");
    const actor = { accountId: c.get("clientAdmin").accountId };
    const set = await auditedChange(deps.sql, "client.grant-set", actor, reference, async () => {
      // An unknown client is 404 whatever the resource_key.
      await findClient(deps.sql, reference);
      if (!deps.resources.has(resource)) {
        throw new ApiError("validation.failed", "Validation failed", [
          {
            path: "resource_key",
            message: `'${resource}' is not one of ${[...deps.resources].join(", ")}`,
            code: "client.resource_unknown",
          },
        ]);
      }
      return setGrant(deps.sql, actor, reference, resource, scopes);
    });
    return c.json(
      {
        ...set.grant,
        grantedAt: set.grant.grantedAt.toISOString(),
        authorizationVersion: Number(set.authorizationVersion),
      },
      200,
    );
  };
