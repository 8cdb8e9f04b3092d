import { z } from "@hono/zod-openapi";
import { listClients } from "../identity/clients/index.ts";
import { clientAdminRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { pageQuery } from "../platform/query.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { ManagementDeps } from "./deps.ts";
import { ClientGrantTypeSchema, ClientListSchema, ClientTypeSchema, NO_CONTROL, toClient } from "./schema.ts";

export const ListClientsQuerySchema = z
  .object({
    name: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .regex(NO_CONTROL, "must not contain control characters")
      .optional()
      .openapi({
        param: { name: "name", in: "query" },
        description: "Clients whose name contains this, case-insensitively",
        example: "reports",
      }),
    type: ClientTypeSchema.optional().openapi({ param: { name: "type", in: "query" } }),
    grantType: ClientGrantTypeSchema.optional().openapi({
      param: { name: "grantType", in: "query" },
      description: "Clients allowed this grant type",
    }),
    firstParty: z
      .enum(["true", "false"])
      .optional()
      .transform((value) => (value === undefined ? undefined : value === "true"))
      .openapi({ param: { name: "firstParty", in: "query" }, type: "boolean", example: false }),
    owner: z
      .uuid()
      .optional()
      .openapi({
        param: { name: "owner", in: "query" },
        description: "Developer apps of this account",
        example: "0b6f3c1e-9a2d-4e8b-8c7f-5d1a2b3c4d5e",
      }),
    createdFrom: z.iso
      .datetime({ offset: true })
      .optional()
      .openapi({
        param: { name: "createdFrom", in: "query" },
        description: "Created at or after this instant",
        example: "2026-11-01T00:00:00Z",
      }),
    createdBefore: z.iso
      .datetime({ offset: true })
      .optional()
      .openapi({
        param: { name: "createdBefore", in: "query" },
        description: "Created before this instant",
        example: "2026-12-01T00:00:00Z",
      }),
    ...pageQuery,
  })
  .superRefine(
    (query, ctx) => {
      if (query.createdFrom && query.createdBefore && query.createdFrom >= query.createdBefore) {
        ctx.addIssue({ code: "custom", path: ["createdBefore"], message: "must be after createdFrom" });
      }
    },
    { when: (payload) => payload.value !== null && typeof payload.value === "object" },
  );

export const listClientsRoute = clientAdminRoute({
  method: "get",
  path: "/management/clients",
  tags: ["clients"],
  summary: "List clients",
  operationId: "listClients",
  description:
    "Oldest first, ties broken by id (a stable order for paging), with the total matching the filters; deleted clients are not listed. The jobs list's envelope and bounds (limit 1..100, default 50; offset 0..100000).",
  request: { query: ListClientsQuerySchema },
  responses: { 200: jsonResponse("A page of clients", ClientListSchema) },
  errors: [],
});

export const listClientsHandler =
  (deps: ManagementDeps): AppRouteHandler<typeof listClientsRoute> =>
  async (c) => {
    const query = c.req.valid("query");
    const { items, total } = await listClients(
      deps.sql,
      {
        name: query.name,
        type: query.type,
        grantType: query.grantType,
        firstParty: query.firstParty,
        ownerAccountId: query.owner,
        createdFrom: query.createdFrom === undefined ? undefined : new Date(query.createdFrom),
        createdBefore: query.createdBefore === undefined ? undefined : new Date(query.createdBefore),
      },
      query.limit,
      query.offset,
    );
    return c.json({ items: items.map(toClient), total, limit: query.limit, offset: query.offset }, 200);
  };
