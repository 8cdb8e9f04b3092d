import type { Logger } from "@tjm/platform";
import type { Sql } from "../../platform/db.ts";
import type { Delivery } from "../delivery/index.ts";
import type { RecoveryLimiter } from "./limits.ts";

/** What the recovery steps and the resolver work with. */
export interface RecoveryContext {
  sql: Sql;
  logger: Logger;
  /** Codes and the reset's notice: enqueued in the transaction, sent from the outbox. */
  delivery: Pick<Delivery, "enqueueMessage" | "wake" | "channels">;
  limiter: RecoveryLimiter;
  /** The key codes are stored under (identity/one-time-codes.ts). */
  oneTimeCodeKey: Buffer;
  /** How long a recovery token works (RECOVERY_TOKEN_TTL_SECONDS, at most 10 minutes). */
  tokenTtlSeconds: number;
  /** The password policy's list (identity/common-passwords.ts). */
  commonPasswords: ReadonlySet<string>;
  /** The back-channel logout sender's wake, after a reset ended sessions. */
  logoutsQueued: () => void;
}
