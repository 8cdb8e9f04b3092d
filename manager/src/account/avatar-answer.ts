/** How both avatar routes answer with a stored avatar: its bytes, or the one error each failure gets. */
import { UPLOADED_IMAGE_HEADERS } from "@tjm/platform/page-headers";
import { InputNotFoundError, StorageRefusedError, StorageUnavailableError } from "@tjm/storage";
import type { Context } from "hono";
import { AVATAR_STORED_TYPE, readAvatar } from "../identity/accounts/index.ts";
import { ApiError } from "../platform/errors.ts";
import type { AccountDeps } from "./deps.ts";

export async function answerAvatar(c: Context, deps: Pick<AccountDeps, "avatars">, avatarKey: string) {
  let bytes: Uint8Array;
  try {
    bytes = await readAvatar(deps.avatars, avatarKey);
  } catch (error) {
    if (error instanceof InputNotFoundError)
      throw new ApiError("avatar.not_found", "the avatar is not in storage");
    if (error instanceof StorageUnavailableError || error instanceof StorageRefusedError) {
      throw new ApiError("dependency.unavailable", "the avatar cannot be read from storage now");
    }
    throw error;
  }
  return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
    ...UPLOADED_IMAGE_HEADERS,
    "content-type": AVATAR_STORED_TYPE,
    // Private: an account's picture, behind an account-portal token; the versioned URL changes with it.
    "cache-control": "private, max-age=86400",
  });
}
