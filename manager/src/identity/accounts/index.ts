export { type AccountCreation, type AccountWithPassword, createAccountWithPassword } from "./create.ts";
export {
  type AccountIdentifiers,
  accountIdentifiers,
  type ChangeRequestOutcome,
  cancelIdentifierChange,
  type IdentifierChangeDeps,
  type IdentifierChannel,
  type IdentifierRequester,
  type PendingIdentifierChange,
  pendingIdentifierChanges,
  removePhone,
  requestIdentifierChange,
  type VerificationOutcome,
  verifyIdentifierChange,
} from "./identifier-changes.ts";
export {
  changePassword,
  type PasswordChange,
  type PasswordChangeOptions,
  type PasswordChangeOutcome,
} from "./password.ts";
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
  findSignInCandidate,
  issuedBeforeRevocation,
  type NewAccount,
  UnknownAccountError,
} from "./store.ts";
