/** The factor settings the account portal and the provider's second step read from the configuration. */
import type { Config } from "../../config.ts";
import { factorSecretKey } from "./secrets.ts";

export interface FactorSettings {
  /** MFA_SECRET_ENCRYPTION_KEY, or its derivation from ENROLLMENT_TOKEN_SECRET (factorSecretKey). */
  secretKey: Buffer;
  /** MFA_CODE_SENDS_PER_HOUR. */
  codeSendsPerHour: number;
  /** The issuer authenticator apps show (MESSAGE_SERVICE_NAME). */
  issuer: string;
  /** MFA_OPERATOR_SMS_EMAIL_ALLOWED. */
  operatorSmsEmailAllowed: boolean;
}

export function factorSettingsFromConfig(config: Config): FactorSettings {
  return {
    secretKey: factorSecretKey(config.MFA_SECRET_ENCRYPTION_KEY ?? config.ENROLLMENT_TOKEN_SECRET),
    codeSendsPerHour: config.MFA_CODE_SENDS_PER_HOUR,
    issuer: config.MESSAGE_SERVICE_NAME,
    operatorSmsEmailAllowed: config.MFA_OPERATOR_SMS_EMAIL_ALLOWED,
  };
}
