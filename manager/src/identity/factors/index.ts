export {
  type EnrolOutcome,
  regenerateRecoveryCodes,
  removeFactor,
  replaceRecoveryCodes,
  type StartOutcome,
  startEnrolment,
  verifyEnrolment,
} from "./enrolment.ts";
export { normalizeRecoveryCode, RECOVERY_CODE_COUNT } from "./recovery-codes.ts";
export { factorSecretKey } from "./secrets.ts";
export {
  ACR_MFA,
  ACR_PASSWORD,
  ACR_VALUES,
  FACTOR_AMR,
  FACTOR_FAILURE_LIMIT,
  type SecondFactorOutcome,
  type SecondStep,
  type SendOutcome,
  type SignInContext,
  type SignInFactorDeps,
  secondStepOf,
  sendSignInCode,
  verifySecondFactor,
} from "./sign-in.ts";
export {
  FACTOR_TYPES,
  type Factor,
  type FactorDeps,
  type FactorRequester,
  type FactorType,
  listFactors,
  type MfaSummary,
  maskDestination,
  mfaSummary,
} from "./store.ts";
export { matchTotp, TOTP_DIGITS, TOTP_PERIOD_SECONDS, totpQrCode, totpUri } from "./totp.ts";
