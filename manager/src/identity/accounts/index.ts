export { type AccountCreation, type AccountWithPassword, createAccountWithPassword } from "./create.ts";
export { changePassword, type PasswordChange, type PasswordChangeOutcome } from "./password.ts";
export { createSignIns, type SignInAttempt, type SignInOutcome, type SignIns } from "./sign-in.ts";
export {
  accountKey,
  addressKey,
  createSignInLimiter,
  DEFAULT_SIGN_IN_LIMITS,
  type SignInLimiter,
  type SignInLimitSettings,
} from "./sign-in-limits.ts";
export {
  ACCOUNT_ROLES,
  type Account,
  AccountExistsError,
  type AccountRole,
  createAccount,
  deleteAccount,
  disableAccount,
  findAccount,
  findRecoverableAccount,
  findRecoveryRecipient,
  findSignInCandidate,
  issuedBeforeRevocation,
  type NewAccount,
  type RecoveryRecipient,
  storeRecoveredPassword,
  UnknownAccountError,
} from "./store.ts";
