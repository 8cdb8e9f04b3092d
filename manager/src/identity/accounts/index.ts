export { type AccountCreation, type AccountWithPassword, createAccountWithPassword } from "./create.ts";
export { deleteOwnAccount } from "./delete-own.ts";
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
  type AccountDeletion,
  AccountExistsError,
  type AccountRole,
  createAccount,
  type DeletedAccount,
  deleteAccount,
  disableAccount,
  findAccount,
  findSignInCandidate,
  issuedBeforeRevocation,
  type NewAccount,
  UnknownAccountError,
} from "./store.ts";
