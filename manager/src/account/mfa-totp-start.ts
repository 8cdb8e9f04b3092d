import { z } from "@hono/zod-openapi";
import { startEnrolment } from "../identity/factors/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { requireRecentAuthenticationFor } from "../identity/tokens/recent-authentication.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import { ENROLMENT_ID_EXAMPLE, requesterOf, startRefusal } from "./mfa-schema.ts";

export const TotpEnrolmentSchema = z
  .object({
    enrolmentId: z.uuid().openapi({ example: ENROLMENT_ID_EXAMPLE }),
    expiresAt: z.iso.datetime().openapi({
      description: "Verify a first code before this (10 minutes)",
      example: "2026-11-27T12:10:00.000Z",
    }),
    secret: z.string().openapi({
      description: "The secret (base32, 160 bits), shown this once, for apps that cannot scan the QR code",
      example: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP",
    }),
    uri: z.string().openapi({
      description:
        "The otpauth:// URI; SHA-1, 6 digits and 30 seconds are the format's defaults, so they are not named",
      example: "otpauth://totp/TJM:ada%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=TJM",
    }),
    qrCode: z.string().openapi({
      description: "The URI as a QR code: an SVG image in a data: URI",
      example: "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmci…",
    }),
  })
  .openapi("MfaTotpEnrolment");

export const startTotpRoute = accountRoute({
  method: "post",
  path: "/me/security/mfa/totp",
  tags: ["account"],
  summary: "Start enrolling an authenticator app (TOTP)",
  operationId: "startMfaTotp",
  description:
    "Needs a sign-in within REAUTHENTICATION_MAX_AGE_SECONDS. Answers a new secret, its otpauth:// URI and a QR code of it, this once (Cache-Control: no-store); the secret is stored encrypted (AES-256-GCM under MFA_SECRET_ENCRYPTION_KEY) and never logged. The factor is added once a first code from the app is verified with POST /api/v1/me/security/mfa/totp/verification within 10 minutes. A new start replaces an enrolment under way. One TOTP factor per account: 409 `mfa.factor_exists`.",
  responses: {
    201: jsonResponse("The enrolment is under way", TotpEnrolmentSchema, {
      enrolmentId: ENROLMENT_ID_EXAMPLE,
      expiresAt: "2026-11-27T12:10:00.000Z",
      secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP",
      uri: "otpauth://totp/TJM:ada%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=TJM",
      qrCode: "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmci…",
    }),
  },
  errors: ["auth.reauthentication_required", "mfa.factor_exists"],
});

export const startTotpHandler =
  (deps: AccountDeps): AppRouteHandler<typeof startTotpRoute> =>
  async (c) => {
    const principal = c.get("account");
    await requireRecentAuthenticationFor(
      deps.sql,
      { event: "mfa.enrolment-started", details: { accountId: principal.accountId, type: "totp" } },
      principal,
      deps.reauthenticationMaxAgeSeconds,
    );
    const outcome = await startEnrolment(
      { ...deps, ...deps.mfa },
      requesterOf(principal, c.req.header("accept-language")),
      "totp",
    );
    if (outcome.outcome !== "started" || !outcome.totp) {
      throw startRefusal("totp", outcome.outcome === "started" ? { outcome: "unknown-account" } : outcome);
    }
    c.header("cache-control", "no-store");
    return c.json(
      {
        enrolmentId: outcome.enrolmentId,
        expiresAt: outcome.expiresAt.toISOString(),
        secret: outcome.totp.secret,
        uri: outcome.totp.uri,
        qrCode: outcome.totp.qrCode,
      },
      201,
    );
  };
