import { z } from "@hono/zod-openapi";
import {
  AVATAR_CONTENT_TYPES,
  AVATAR_MAX_BYTES,
  AVATAR_UPLOAD_URL_SECONDS,
  type AvatarContentType,
  createAvatarUploadUrl,
  recordAvatarUploadUrlRefused,
} from "../identity/accounts/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { ApiError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonBody, jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { AVATAR_UPLOAD_ID_EXAMPLE } from "./profile-schema.ts";

const AvatarUploadRequestSchema = z
  .object({
    contentType: z
      .string()
      .max(200)
      .openapi({ description: `One of ${AVATAR_CONTENT_TYPES.join(", ")}` }),
    contentLength: z
      .number()
      .int()
      .min(1)
      .openapi({ description: `The file's exact size in bytes, at most ${AVATAR_MAX_BYTES} (2 MiB)` }),
  })
  .openapi("AvatarUploadRequest");

const AvatarUploadSchema = z
  .object({
    avatarUploadId: z
      .uuid()
      .openapi({ description: "Claimed with PATCH /api/v1/me/profile {avatarUploadId}" }),
    url: z.url().openapi({ description: "The presigned S3 PUT URL" }),
    method: z.literal("PUT"),
    headers: z
      .object({ "content-type": z.string(), "content-length": z.string() })
      .openapi({ description: "The headers the PUT must carry exactly: the signature covers them" }),
    expiresAt: z.iso
      .datetime()
      .openapi({ description: `${AVATAR_UPLOAD_URL_SECONDS / 60} minutes from now` }),
  })
  .openapi("AvatarUpload");

export const createAvatarUploadUrlRoute = accountRoute({
  method: "post",
  path: "/me/profile/avatar-upload-urls",
  operationId: "createAvatarUploadUrl",
  tags: ["account"],
  summary: "Create a signed avatar upload URL",
  description:
    "A presigned S3 PUT, valid 5 minutes, to a staging key of the account. Its signature covers Content-Type and Content-Length: the store refuses a body of another type or size. Nothing uploaded is the avatar until PATCH /api/v1/me/profile claims it; an upload not claimed within an hour is deleted. At most 10 URLs per account per hour.",
  request: jsonBody(AvatarUploadRequestSchema, { contentType: "image/png", contentLength: 48213 }),
  responses: {
    201: jsonResponse("The upload URL", AvatarUploadSchema, {
      avatarUploadId: AVATAR_UPLOAD_ID_EXAMPLE,
      url: `https://s3.example.com/tjm-avatars/avatar-staging/0b6b1e58-3f5f-4a8e-9c1d-2f8c7a9e4b10/${AVATAR_UPLOAD_ID_EXAMPLE}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-SignedHeaders=content-length%3Bcontent-type%3Bhost&X-Amz-Signature=5d2c1e0b9a8f7e6d5c4b3a291807f6e5d4c3b2a1908f7e6d5c4b3a2918076f5e4`,
      method: "PUT",
      headers: { "content-type": "image/png", "content-length": "48213" },
      expiresAt: "2026-11-27T12:05:00.000Z",
    }),
  },
  errors: [
    "avatar.too_large",
    "avatar.unsupported_type",
    "avatar.upload_rate_limited",
    "request.body_too_large",
    "request.unsupported_media_type",
  ],
});

export const createAvatarUploadUrlHandler =
  (deps: AccountDeps): AppRouteHandler<typeof createAvatarUploadUrlRoute> =>
  async (c) => {
    const { accountId, clientId } = c.get("account");
    const actor = { accountId, clientId };
    const { contentType, contentLength } = c.req.valid("json");
    if (!(AVATAR_CONTENT_TYPES as readonly string[]).includes(contentType)) {
      await recordAvatarUploadUrlRefused(deps.sql, actor, "unsupported_type");
      throw new ApiError("avatar.unsupported_type", `an avatar is one of ${AVATAR_CONTENT_TYPES.join(", ")}`);
    }
    if (contentLength > AVATAR_MAX_BYTES) {
      await recordAvatarUploadUrlRefused(deps.sql, actor, "too_large");
      throw new ApiError("avatar.too_large", `an avatar is at most ${AVATAR_MAX_BYTES} bytes`);
    }
    const outcome = await createAvatarUploadUrl(deps.sql, deps.avatars, actor, {
      contentType: contentType as AvatarContentType,
      contentLength,
    });
    if ("refused" in outcome) {
      // Set on the context: the error handler's answer keeps it.
      c.header("retry-after", String(outcome.retryAfterSeconds));
      throw new ApiError("avatar.upload_rate_limited", "too many avatar upload URLs in the last hour");
    }
    const { uploadId, url, expiresAt } = outcome.created;
    c.header("cache-control", "no-store");
    return c.json(
      {
        avatarUploadId: uploadId,
        url,
        method: "PUT" as const,
        headers: { "content-type": contentType, "content-length": String(contentLength) },
        expiresAt: expiresAt.toISOString(),
      },
      201,
    );
  };
