/** The snapshot of the account (GET /me) and the profile change (PATCH /me/profile). */
import { z } from "@hono/zod-openapi";
import { LOCALES } from "@tjm/platform/locale";
import { GENDERS, PROFILE_LOCALE_TAGS, type Profile } from "../identity/accounts/index.ts";
import type { MfaSummary } from "../identity/factors/index.ts";

export const ACCOUNT_ID_EXAMPLE = "0b6b1e58-3f5f-4a8e-9c1d-2f8c7a9e4b10";
export const AVATAR_UPLOAD_ID_EXAMPLE = "6f1c2a9e-8d4b-4c3a-9e7f-1a2b3c4d5e6f";

/** Where the account's avatar is read: this API's own route, versioned by the stored avatar. */
export const AVATAR_PATH = "/api/v1/me/profile/avatar";

const MfaSummarySchema = z
  .object({
    enabled: z.boolean().openapi({ description: "Whether a second factor is required at sign-in" }),
    factors: z
      .array(
        z.object({
          id: z.uuid(),
          type: z.enum(["totp", "sms", "email"]),
          maskedDestination: z.string().nullable(),
          createdAt: z.iso.datetime(),
          lastUsedAt: z.iso.datetime().nullable(),
        }),
      )
      .openapi({ description: "The account's enrolled factors" }),
    recoveryCodesRemaining: z.number().int().min(0),
  })
  .openapi("MfaSummary");

export const AccountSnapshotSchema = z
  .object({
    id: z.uuid(),
    email: z.object({ address: z.string(), verified: z.boolean() }),
    phone: z
      .object({ number: z.string().openapi({ description: "E.164" }), verified: z.boolean() })
      .nullable(),
    name: z.string(),
    avatarUrl: z.string().nullable().openapi({
      description:
        "Path of the avatar on this API (a 256 × 256 WebP, read with the same token); it changes with the avatar. Null: none.",
    }),
    dateOfBirth: z.string().nullable().openapi({ description: "YYYY-MM-DD" }),
    gender: z.enum(GENDERS).nullable(),
    genderDescription: z.string().nullable(),
    locale: z
      .enum(LOCALES)
      .nullable()
      .openapi({ description: "The locale messages to the account are written in" }),
    roles: z.array(z.string()),
    mfa: MfaSummarySchema,
    sessionCount: z.number().int().min(0).openapi({ description: "The account's live sign-in sessions" }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("AccountSnapshot");

export type AccountSnapshot = z.infer<typeof AccountSnapshotSchema>;

export const ACCOUNT_SNAPSHOT_EXAMPLE: AccountSnapshot = {
  id: ACCOUNT_ID_EXAMPLE,
  email: { address: "shirin@example.com", verified: true },
  phone: null,
  name: "Shirin Ahmadi",
  avatarUrl: `${AVATAR_PATH}?v=${AVATAR_UPLOAD_ID_EXAMPLE}`,
  dateOfBirth: "1990-03-21",
  gender: "female",
  genderDescription: null,
  locale: "fa",
  roles: ["operator"],
  mfa: { enabled: false, factors: [], recoveryCodesRemaining: 0 },
  sessionCount: 2,
  createdAt: "2026-11-01T09:30:00.000Z",
  updatedAt: "2026-11-27T12:00:00.000Z",
};

/**
 * An avatar's URL on `path`, versioned by the upload it came from (the key's last segment), so a
 * cached copy stands as long as the avatar does; null for none.
 */
export function versionedAvatarUrl(path: string, avatarKey: string | null): string | null {
  if (avatarKey === null) return null;
  const version = avatarKey.slice(avatarKey.lastIndexOf("/") + 1).replace(/\.webp$/, "");
  return `${path}?v=${version}`;
}

const avatarUrl = (avatarKey: string | null) => versionedAvatarUrl(AVATAR_PATH, avatarKey);

/** The snapshot from the profile, the factors' summary and the session count. */
export function toSnapshot(profile: Profile, mfa: MfaSummary, sessionCount: number): AccountSnapshot {
  return {
    id: profile.id,
    email: { address: profile.email, verified: profile.emailVerified },
    phone: profile.phone === null ? null : { number: profile.phone, verified: profile.phoneVerified },
    name: profile.displayName,
    avatarUrl: avatarUrl(profile.avatarKey),
    dateOfBirth: profile.dateOfBirth,
    gender: profile.gender,
    genderDescription: profile.genderDescription,
    locale: profile.locale,
    roles: profile.roles,
    mfa: {
      enabled: mfa.enabled,
      factors: mfa.factors.map((factor) => ({
        id: factor.id,
        type: factor.type,
        maskedDestination: factor.maskedDestination,
        createdAt: factor.createdAt.toISOString(),
        lastUsedAt: factor.lastUsedAt?.toISOString() ?? null,
      })),
      recoveryCodesRemaining: mfa.recoveryCodesRemaining,
    },
    sessionCount,
    createdAt: profile.createdAt.toISOString(),
    updatedAt: profile.updatedAt.toISOString(),
  };
}

export const ProfileChangeSchema = z
  .object({
    name: z.string().max(1000).optional().openapi({
      description:
        "1–100 characters after NFC normalisation and trimming; no control characters; something visible (name.invisible); no bidirectional embedding, override or isolate, U+202A–U+202E or U+2066–U+2069 (name.bidi_override); ZWNJ and ZWJ are kept",
    }),
    dateOfBirth: z.string().max(100).nullable().optional().openapi({
      description: "A Gregorian date YYYY-MM-DD, from 1900-01-01 to today (UTC); null removes it",
    }),
    gender: z
      .string()
      .max(100)
      .nullable()
      .optional()
      .openapi({
        description: `One of ${GENDERS.join(", ")} (an open list: self-described takes genderDescription); null removes it`,
      }),
    genderDescription: z.string().max(1000).nullable().optional().openapi({
      description: "With gender self-described (required then): 1–50 characters, the person's own words",
    }),
    locale: z
      .string()
      .max(100)
      .nullable()
      .optional()
      .openapi({
        description: `One of ${PROFILE_LOCALE_TAGS.join(", ")} (prs is stored as fa-AF); null: chosen per request`,
      }),
    avatarUploadId: z.uuid().nullable().optional().openapi({
      description:
        "An upload made through POST /api/v1/me/profile/avatar-upload-urls, to make the avatar once the file is uploaded; null removes the avatar",
    }),
  })
  .openapi("ProfileChange", { description: "Fields left out stay as they are; unknown fields are removed" });
