import { z } from "@hono/zod-openapi";
import { WORKER_POOLS } from "@tjm/protocol";
import { operatorRoute } from "../identity/tokens/audiences.ts";
import type { Sql } from "../platform/db.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { BODY_ERRORS, jsonContent, jsonResponse } from "../platform/routes.ts";
import { insertEnrollmentToken } from "./store.ts";
import { generateEnrollmentToken } from "./tokens.ts";

export const ENROLLMENT_TTL_SECONDS = { min: 60, max: 7 * 24 * 3600, default: 3600 } as const;

export const IssueEnrollmentTokenBodySchema = z
  .object({
    ttlSeconds: z
      .number()
      .int()
      .min(ENROLLMENT_TTL_SECONDS.min)
      .max(ENROLLMENT_TTL_SECONDS.max)
      .default(ENROLLMENT_TTL_SECONDS.default)
      .openapi({ description: "Lifetime, 60 s to 7 days; default 1 hour", example: 3600 }),
    pool: z
      .enum(WORKER_POOLS)
      .optional()
      .openapi({ description: "Pool the enrolling Worker must declare; any when omitted", example: "cpu" }),
    label: z
      .string()
      .min(1)
      .max(128)
      // PostgreSQL text cannot hold U+0000 (the fuzzer's 500); no control character is a label.
      .refine((label) => !/\p{Cc}/u.test(label), "must not contain control characters")
      .optional()
      .openapi({
        description: "Free text for operators, e.g. the host it is meant for, without control characters",
        example: "encoder-07",
      }),
  })
  .openapi("IssueEnrollmentToken");

export const EnrollmentTokenSchema = z
  .object({
    id: z.uuid().openapi({ example: "3e1f4c2a-9b8d-4e7f-a6c5-1d2e3f4a5b6c" }),
    token: z.string().openapi({
      description: "The one-time secret, shown only in this response",
      example: "tjm_et_q3V9yN2xW8pL0sT4uR7eK1mZ6aB5cD3fG9hJ2kL4nP0",
    }),
    expiresAt: z.iso.datetime().openapi({ example: "2026-11-21T11:00:00.000Z" }),
    pool: z.enum(WORKER_POOLS).nullable().openapi({ example: "cpu" }),
    label: z.string().nullable().openapi({ example: "encoder-07" }),
  })
  .openapi("EnrollmentToken");

export const issueEnrollmentTokenRoute = operatorRoute({
  method: "post",
  path: "/enrollment-tokens",
  tags: ["workers"],
  summary: "Issue a Worker enrollment token",
  operationId: "issueEnrollmentToken",
  description:
    "A random, single-use, time-limited token for a Worker's first registration. It is shown once; the Manager keeps only its HMAC-SHA256. The body is optional.",
  request: { body: { required: false, content: jsonContent(IssueEnrollmentTokenBodySchema) } },
  responses: { 201: jsonResponse("The token", EnrollmentTokenSchema) },
  errors: BODY_ERRORS,
});

export interface EnrollmentDeps {
  sql: Sql;
  hashToken: (token: string) => Promise<Uint8Array>;
}

export const issueEnrollmentToken =
  (deps: EnrollmentDeps): AppRouteHandler<typeof issueEnrollmentTokenRoute> =>
  async (c) => {
    // Without a body the validator is skipped; the defaults still apply.
    const body = IssueEnrollmentTokenBodySchema.parse(c.req.valid("json") ?? {});
    const token = generateEnrollmentToken();
    const id = crypto.randomUUID();
    const { expiresAt } = await insertEnrollmentToken(deps.sql, {
      id,
      tokenHash: await deps.hashToken(token),
      pool: body.pool,
      label: body.label,
      createdBy: c.get("operator").subject,
      ttlSeconds: body.ttlSeconds,
    });
    return c.json(
      { id, token, expiresAt: expiresAt.toISOString(), pool: body.pool ?? null, label: body.label ?? null },
      201,
    );
  };
