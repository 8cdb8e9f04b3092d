export {
  AVATAR_CONTENT_TYPES,
  AVATAR_MAX_BYTES,
  AVATAR_MAX_INPUT_PIXELS,
  AVATAR_SIDE,
  AVATAR_STORED_TYPE,
  type AvatarContentType,
} from "./avatar-image.ts";
export {
  AVATAR_UPLOAD_LIFETIME_SECONDS,
  AVATAR_UPLOAD_URL_SECONDS,
  AVATAR_UPLOADS_PER_HOUR,
  type AvatarRefusal,
  AvatarRefusedError,
  type AvatarStorage,
  createAvatarUploadUrl,
  deleteAvatarObject,
  deleteAvatarsOf,
  readAvatar,
  recordAvatarUploadUrlRefused,
  startAvatarUploadSweep,
  storeAvatarFromUpload,
  sweepAvatarUploads,
} from "./avatars.ts";
export { type AccountCreation, type AccountWithPassword, createAccountWithPassword } from "./create.ts";
export { deleteOwnAccount } from "./delete-own.ts";
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
export { type LockedAccount, lockAccount } from "./locked-account.ts";
export {
  changePassword,
  type PasswordChange,
  type PasswordChangeOptions,
  type PasswordChangeOutcome,
} from "./password.ts";
export { findGender, findProfile, type Profile, recordProfileRefused, updateProfile } from "./profile.ts";
export {
  checkProfileChange,
  GENDER_DESCRIPTION_MAX_CHARACTERS,
  GENDERS,
  NAME_MAX_CHARACTERS,
  PROFILE_LOCALE_TAGS,
} from "./profile-rules.ts";
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
  findRecoverableAccount,
  findRecoveryRecipient,
  findSignInCandidate,
  issuedBeforeRevocation,
  type NewAccount,
  type RecoveryRecipient,
  storeRecoveredPassword,
  UnknownAccountError,
} from "./store.ts";
