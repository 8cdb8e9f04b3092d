/**
 * The recovery aggregate: challenges, codes, recovery tokens and their limits, below the public
 * routes of src/authentication/ and the provider's recovery pages. The only writer of
 * recovery_challenges, recovery_tokens and recovery_limits.
 */
import type { RecoveryContext } from "./deps.ts";
import { createRecoveryLimiter, type RecoveryLimitSettings } from "./limits.ts";
import { type CodeRequest, type CodeRequestOutcome, requestCode } from "./request-code.ts";
import { type PasswordReset, type PasswordResetOutcome, resetPassword } from "./reset-password.ts";
import { RecoveryResolver } from "./resolver.ts";
import { type CodeVerification, type CodeVerificationOutcome, verifyCode } from "./verify-code.ts";

export {
  deliveryChannel,
  identifierProblem,
  phoneKey,
  RECOVERY_CHANNELS,
  type RecoveryChannel,
  recoveryIdentifierKey,
} from "./identifiers.ts";
export { DEFAULT_RECOVERY_LIMITS, type RecoveryLimitSettings } from "./limits.ts";
export type {
  CodeRequest,
  CodeRequestOutcome,
  CodeVerification,
  CodeVerificationOutcome,
  PasswordReset,
  PasswordResetOutcome,
};

export interface RecoverySettings {
  limits: RecoveryLimitSettings;
  /** RECOVERY_TOKEN_TTL_SECONDS. */
  tokenTtlSeconds: number;
  /** How often the resolver looks for other replicas' challenges (MESSAGE_POLL_MS). */
  pollMs: number;
}

/** The three steps, as the routes and the pages call them. */
export interface Recovery {
  requestCode(request: CodeRequest): Promise<CodeRequestOutcome>;
  verifyCode(verification: CodeVerification): Promise<CodeVerificationOutcome>;
  resetPassword(reset: PasswordReset): Promise<PasswordResetOutcome>;
}

export interface RecoveryService extends Recovery {
  start(): void;
  stop(): Promise<void>;
}

export function createRecovery(
  settings: RecoverySettings,
  deps: Omit<RecoveryContext, "limiter" | "tokenTtlSeconds">,
): RecoveryService {
  const context: RecoveryContext = {
    ...deps,
    limiter: createRecoveryLimiter(deps.sql, settings.limits),
    tokenTtlSeconds: settings.tokenTtlSeconds,
  };
  const resolver = new RecoveryResolver(context, settings.limits.windowSeconds, settings.pollMs);
  return {
    requestCode: (request) => requestCode(context, request, () => resolver.wake()),
    verifyCode: (verification) => verifyCode(context, verification),
    resetPassword: (reset) => resetPassword(context, reset),
    start: () => resolver.start(),
    stop: () => resolver.stop(),
  };
}
