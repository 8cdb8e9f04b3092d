import type { Logger } from "@tjm/platform";
import type { AvatarStorage } from "../identity/accounts/index.ts";
import type { SignInLimitSettings } from "../identity/accounts/sign-in-limits.ts";
import type { Delivery } from "../identity/delivery/index.ts";
import type { FactorSettings } from "../identity/factors/settings.ts";
import type { Sql } from "../platform/db.ts";

/** What the account portal's routes (/api/v1/me…) work with. */
export interface AccountDeps {
  sql: Sql;
  logger: Logger;
  /** Codes and notices: enqueued in the transaction of the change, sent from the outbox. */
  delivery: Pick<Delivery, "enqueueMessage" | "wake" | "channels">;
  /** REAUTHENTICATION_MAX_AGE_SECONDS: how recent a sign-in the sensitive actions need. */
  reauthenticationMaxAgeSeconds: number;
  /** The key one-time codes are stored under (identity/one-time-codes.ts). */
  oneTimeCodeKey: Buffer;
  /** Told after a request ended sessions: sends the back-channel logouts it queued now. */
  logoutsQueued: () => void;
  /** Where avatars are staged and stored (AVATAR_BUCKET). */
  avatars: AvatarStorage;
  /** The sign-in limit (SIGN_IN_*): a wrong current password of a password change counts toward it. */
  signInLimits: SignInLimitSettings;
  /** Second factors of sign-in (identity/factors): keys and limits. */
  mfa: FactorSettings;
  /** CLIENT_SECRET_HMAC_KEY: developer apps' secrets are stored as their HMAC under it. */
  clientSecretKey: string | undefined;
}
