import { StorageRefusedError, StorageUnavailableError } from "@tjm/storage";
import {
  type AvatarRefusal,
  AvatarRefusedError,
  checkProfileChange,
  deleteAvatarObject,
  findGender,
  recordProfileRefused,
  storeAvatarFromUpload,
  updateProfile,
} from "../identity/accounts/index.ts";
import { accountRoute } from "../identity/tokens/audiences.ts";
import { ApiError, type DetailCode, type ErrorCode, validationError } from "../platform/errors.ts";
import type { AppRouteHandler } from "../platform/http.ts";
import { jsonBody, jsonResponse } from "../platform/routes.ts";
import type { AccountDeps } from "./deps.ts";
import {
  ACCOUNT_SNAPSHOT_EXAMPLE,
  AccountSnapshotSchema,
  AVATAR_UPLOAD_ID_EXAMPLE,
  ProfileChangeSchema,
} from "./profile-schema.ts";
import { readSnapshot } from "./read-me.ts";

export const updateProfileRoute = accountRoute({
  method: "patch",
  path: "/me/profile",
  operationId: "updateProfile",
  tags: ["account"],
  summary: "Update the profile",
  description:
    "Changes the fields given: name, date of birth, gender (with the person's own words for self-described), locale, and the avatar. `avatarUploadId` makes an uploaded file the avatar only after the Manager has read it, checked that its bytes are the declared image type, decoded it (at most 4096 × 4096 pixels) and re-encoded it as a 256 × 256 WebP without its metadata; a file refused (413, 415) is deleted, and nothing else of the request is stored. Answers the new snapshot. Every change, and every refusal, writes one audit row; a body naming no field (empty, or only unknown fields) changes nothing, writes no row and answers the snapshot as it is.",
  request: jsonBody(ProfileChangeSchema, {
    name: "Shirin Ahmadi",
    dateOfBirth: "1990-03-21",
    gender: "female",
    locale: "fa",
    avatarUploadId: AVATAR_UPLOAD_ID_EXAMPLE,
  }),
  responses: {
    200: jsonResponse("The account after the change", AccountSnapshotSchema, ACCOUNT_SNAPSHOT_EXAMPLE),
  },
  errors: [
    "avatar.too_large",
    "avatar.too_many_pixels",
    "avatar.unsupported_type",
    "request.body_too_large",
    "request.unsupported_media_type",
    "dependency.unavailable",
  ],
});

/** An upload that cannot be claimed is a field of the request that is wrong: a 400 with its detail. */
const CLAIM_REFUSALS: Record<"unknown" | "missing", { code: DetailCode; message: string }> = {
  unknown: {
    code: "avatar.upload_unknown",
    message: "no avatar upload of this account can be claimed with this id",
  },
  missing: { code: "avatar.upload_missing", message: "nothing has been uploaded for this avatar upload yet" },
};

const REFUSALS: Record<
  Exclude<AvatarRefusal, "unknown" | "missing">,
  { code: ErrorCode; message: string }
> = {
  too_large: { code: "avatar.too_large", message: "the uploaded avatar is over 2 MiB" },
  too_many_pixels: { code: "avatar.too_many_pixels", message: "the uploaded image has too many pixels" },
  unsupported: {
    code: "avatar.unsupported_type",
    message: "the uploaded file is not an image of its declared type",
  },
};

const todayUtc = () => new Date().toISOString().slice(0, 10);

export const updateProfileHandler =
  (deps: AccountDeps): AppRouteHandler<typeof updateProfileRoute> =>
  async (c) => {
    const { accountId, clientId } = c.get("account");
    const actor = { accountId, clientId };
    const { avatarUploadId, ...fields } = c.req.valid("json");
    const named = Object.keys(c.req.valid("json"));
    const { change, problems } = checkProfileChange(
      fields,
      await findGender(deps.sql, accountId),
      todayUtc(),
    );
    if (problems.length > 0) {
      await recordProfileRefused(deps.sql, actor, { reason: "validation", fields: named });
      throw validationError(problems);
    }
    let avatarKey: string | null | undefined = avatarUploadId === null ? null : undefined;
    if (avatarUploadId) {
      try {
        avatarKey = await storeAvatarFromUpload(
          deps.sql,
          deps.avatars,
          accountId,
          avatarUploadId,
          deps.logger,
        );
      } catch (error) {
        if (error instanceof StorageUnavailableError || error instanceof StorageRefusedError) {
          throw new ApiError("dependency.unavailable", "the avatar upload cannot be read from storage now");
        }
        if (!(error instanceof AvatarRefusedError)) throw error;
        await recordProfileRefused(deps.sql, actor, {
          reason: `avatar.${error.refusal}`,
          fields: named,
          avatarUploadId,
        });
        if (error.refusal === "unknown" || error.refusal === "missing") {
          const refusal = CLAIM_REFUSALS[error.refusal];
          throw validationError([{ path: "avatarUploadId", ...refusal }]);
        }
        const refusal = REFUSALS[error.refusal];
        throw new ApiError(refusal.code, refusal.message);
      }
    }
    c.header("cache-control", "no-store");
    // Nothing named (an empty body, or only fields stripped as unknown): nothing changes, and no
    // audit row claims a change.
    if (Object.keys(change).length === 0 && avatarKey === undefined) {
      return c.json(await readSnapshot(deps, accountId), 200);
    }
    const { replacedAvatarKey } = await updateProfile(
      deps.sql,
      actor,
      avatarKey === undefined ? change : { ...change, avatarKey },
    );
    if (replacedAvatarKey !== null) await deleteAvatarObject(deps.avatars, replacedAvatarKey, deps.logger);
    return c.json(await readSnapshot(deps, accountId), 200);
  };
