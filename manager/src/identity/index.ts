export { generateClientSecret, hashClientSecret, verifyClientSecret } from "./clients/secrets.ts";
export { readCommonPasswords } from "./common-passwords.ts";
export {
  type Argon2Parameters,
  createPasswordHasher,
  hashPassword,
  needsRehash,
  PASSWORD_HASH_PARAMETERS,
  type PasswordHasher,
  verifyPassword,
  verifyUnknownAccountPassword,
} from "./password-hashing.ts";
export {
  normalizePassword,
  type PasswordContext,
  type PasswordProblem,
  type PasswordProblemCode,
  passwordProblems,
} from "./passwords.ts";
