import { z } from "@hono/zod-openapi";
import { listSessions } from "../identity/sessions/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { AccountSessionSchema, isoOrNull } from "./sessions-schema.ts";

const SessionListSchema = z
  .object({ sessions: z.array(AccountSessionSchema).openapi({ description: "Newest sign-in first" }) })
  .openapi("AccountSessionList");

export const listSessionsRoute = accountRoute({
  method: "get",
  path: "/me/sessions",
  tags: ["account"],
  summary: "List the account's sessions",
  operationId: "listMySessions",
  description:
    "Each live sign-in session of the account at the built-in provider (one per browser), with the clients it signed in to. `current` marks the session of the token that asked. A route of its own rather than part of GET /api/v1/me: the list is read only when the page shows it.",
  responses: {
    200: jsonResponse("The account's live sessions", SessionListSchema, {
      sessions: [
        {
          id: "kT3qG2vQy1bX9rLmN8dPw",
          current: true,
          createdAt: "2026-11-27T09:12:03.000Z",
          lastUsedAt: "2026-11-27T11:40:19.000Z",
          expiresAt: "2026-12-11T09:12:03.000Z",
          clientAddress: "203.0.113.7",
          userAgent: "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0",
          clients: [{ clientId: "7d1f4a52-3c9e-4b8f-a0d1-6e2b9c4f8a31", name: "Admin console" }],
        },
      ],
    }),
  },
  errors: [],
});

export const listSessionsHandler =
  (deps: AccountDeps): AppRouteHandler<typeof listSessionsRoute> =>
  async (c) => {
    const principal = c.get("account");
    const sessions = await listSessions(deps.sql, principal.accountId);
    return c.json(
      {
        sessions: sessions.map((session) => ({
          id: session.uid,
          current: session.clients.some((client) => client.sid === principal.sessionId),
          createdAt: isoOrNull(session.signedInAt),
          lastUsedAt: isoOrNull(session.lastUsedAt),
          expiresAt: isoOrNull(session.expiresAt),
          clientAddress: session.clientAddress ?? null,
          userAgent: session.userAgent ?? null,
          clients: session.clients.map((client) => ({
            clientId: client.clientId,
            name: client.name ?? null,
          })),
        })),
      },
      200,
    );
  };
