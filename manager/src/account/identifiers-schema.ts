/**
 * The named components of the identifier routes (PATCH /me/identifiers, its verifications and
 * cancellations), and the checks that make a typed identifier the one TJM stores.
 */
import { z } from "@hono/zod-openapi";
import type { AccountIdentifiers, PendingIdentifierChange } from "../identity/accounts/identifier-changes.ts";
import { emailKeyProblem, MAX_EMAIL_LENGTH, phoneNumber } from "../identity/identifiers.ts";
import type { ErrorDetail } from "../platform/errors.ts";
import { validationError } from "../platform/errors.ts";

const CHANGE_ID = "3f8e2b1c-7a4d-4c2e-9b6f-1d2e3f4a5b6c";

export const IdentifiersUpdateSchema = z
  .object({
    email: z
      .string()
      .max(4 * MAX_EMAIL_LENGTH)
      .optional()
      .openapi({
        description:
          "The new e-mail address. It takes effect once the code sent to it is verified. The account's own address, while unverified, sends a code that verifies it.",
        example: "ada@example.com",
      }),
    phone: z.string().max(64).nullable().optional().openapi({
      description:
        "The new phone number in international form (`+` and the country code; spaces, hyphens, Persian and Arabic-Indic digits accepted), stored in E.164 once the code sent to it by SMS is verified. `null` removes the account's phone at once.",
      example: "+98 912 345 6789",
    }),
  })
  .refine((body) => body.email !== undefined || body.phone !== undefined, {
    message: "name an email, a phone, or both",
    path: ["email"],
  })
  .openapi("IdentifiersUpdate");

export const PendingIdentifierChangeSchema = z
  .object({
    id: z.uuid().openapi({ description: "The change's id, for its verification", example: CHANGE_ID }),
    channel: z.enum(["email", "phone"]).openapi({ example: "email" }),
    identifier: z.string().openapi({
      description: "The new identifier the code was sent to (a phone in E.164)",
      example: "ada@example.com",
    }),
    expiresAt: z.string().openapi({
      description: "When the code stops working (10 minutes after it was sent)",
      example: "2026-11-27T12:10:00.000Z",
    }),
  })
  .openapi("PendingIdentifierChange");

export const AccountIdentifiersSchema = z
  .object({
    email: z.string().openapi({ example: "ada@example.com" }),
    emailVerified: z.boolean().openapi({ example: true }),
    phone: z.string().nullable().openapi({ description: "E.164, or null", example: "+989123456789" }),
    phoneVerified: z.boolean().openapi({ example: false }),
    pendingChanges: z.array(PendingIdentifierChangeSchema).openapi({
      description: "Changes waiting for their code, at most one per channel",
    }),
  })
  .openapi("AccountIdentifiers");

export const IDENTIFIERS_EXAMPLE = {
  email: "ada@example.com",
  emailVerified: true,
  phone: null,
  phoneVerified: false,
  pendingChanges: [
    { id: CHANGE_ID, channel: "email", identifier: "ada@new.example", expiresAt: "2026-11-27T12:10:00.000Z" },
  ],
};

export function identifiersBody(identifiers: AccountIdentifiers, pending: PendingIdentifierChange[]) {
  return {
    email: identifiers.email,
    emailVerified: identifiers.emailVerified,
    phone: identifiers.phone,
    phoneVerified: identifiers.phoneVerified,
    pendingChanges: pending.map((change) => ({
      id: change.id,
      channel: change.channel,
      identifier: change.identifier,
      expiresAt: change.expiresAt.toISOString(),
    })),
  };
}

/** An address with something each side of one @ and no spaces (the accounts table's own check is looser). */
const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+$/u;

/**
 * The body's identifiers in their stored form (a trimmed address, an E.164 number), or a 400
 * listing every one that is not.
 */
export function typedIdentifiers(body: z.infer<typeof IdentifiersUpdateSchema>): {
  email: string | undefined;
  phone: string | null | undefined;
} {
  const details: ErrorDetail[] = [];
  const email = body.email?.trim();
  if (email !== undefined && (!EMAIL_SHAPE.test(email) || emailKeyProblem(email))) {
    details.push({
      path: "email",
      message: emailKeyProblem(email)?.message ?? "not an e-mail address",
      code: "identifier.email_invalid",
    });
  }
  const phone = typeof body.phone === "string" ? phoneNumber(body.phone) : body.phone;
  if (phone === undefined && typeof body.phone === "string") {
    details.push({
      path: "phone",
      message: "not a valid phone number in international form (+ and the country code)",
      code: "identifier.phone_invalid",
    });
  }
  if (details.length > 0) throw validationError(details);
  return { email, phone };
}
