/**
 * Password hashes: argon2id through @node-rs/argon2 (a prebuilt addon; on Deno it needs
 * `--allow-ffi`, which `npm run manager:deno` grants for node_modules/@node-rs only: the Manager
 * hashes the password a recovery sets). The parameters travel in the PHC string, so a hash made under older ones still
 * verifies, and needsRehash says when to replace it after a successful sign-in.
 */
import { type Algorithm, hash, parseOptions, type Version, verify } from "@node-rs/argon2";
import { randomBase64url } from "../platform/random.ts";
import { normalizePassword } from "./passwords.ts";

// The addon's `Algorithm.Argon2id` and `Version.V0x13` (v=19), written out: its enums are ambient
// const enums, which the compiler cannot inline under isolated modules, and absent at run time.
const ARGON2ID = 2 as Algorithm;
const ARGON2_VERSION_19 = 1 as Version;

export interface Argon2Parameters {
  /** KiB of memory per hash (`m=`). */
  memoryCost: number;
  /** Passes over that memory (`t=`). */
  timeCost: number;
  /** Lanes (`p=`). */
  parallelism: number;
}

/**
 * Chosen with `BENCH_SCENARIOS=argon2 npm run bench` (bench/argon2) on the 2-core development
 * machine: 109 ms a hash (OWASP's minimum, 19 MiB and t=2, takes 5 ms there). Memory first, as
 * RFC 9106 advises, up to what concurrent sign-ins can hold: 64 MiB is its second recommended
 * option, and the libuv pool (4 threads) caps a burst at 256 MiB (measured), where 128 MiB would
 * reach 512 MiB. Then passes up to the 100-250 ms band: t=8. One lane, so a sign-in never takes
 * a second core from the jobs; hashing here is bound by memory bandwidth anyway (about 8 hashes/s
 * at any concurrency).
 */
export const PASSWORD_HASH_PARAMETERS: Argon2Parameters = {
  memoryCost: 64 * 1024,
  timeCost: 8,
  parallelism: 1,
};

export interface PasswordHasher {
  /** A PHC string (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`) of the NFKC-normalised password. */
  hash(password: string): Promise<string>;
  verify(passwordHash: string, password: string): Promise<boolean>;
  /**
   * For a sign-in to an account that does not exist: one full verification against a hash made
   * with these parameters, so the answer takes as long as a wrong password does. Always false.
   */
  verifyUnknownAccount(password: string): Promise<false>;
  /** True when the hash was made with other parameters, or another algorithm or version. */
  needsRehash(passwordHash: string): boolean;
}

export function createPasswordHasher(parameters: Argon2Parameters): PasswordHasher {
  const options = { ...parameters, algorithm: ARGON2ID, version: ARGON2_VERSION_19 };
  let unknownAccountHash: Promise<string> | undefined;
  return {
    hash: (password) => hash(normalizePassword(password), options),
    verify: (passwordHash, password) => verify(passwordHash, normalizePassword(password)),
    async verifyUnknownAccount(password) {
      unknownAccountHash ??= hash(randomBase64url(32), options);
      await verify(await unknownAccountHash, normalizePassword(password));
      return false;
    },
    needsRehash(passwordHash) {
      const used = parseOptions(passwordHash);
      return (
        used.algorithm !== ARGON2ID ||
        used.version !== ARGON2_VERSION_19 ||
        used.memoryCost !== parameters.memoryCost ||
        used.timeCost !== parameters.timeCost ||
        used.parallelism !== parameters.parallelism
      );
    },
  };
}

const defaultHasher = createPasswordHasher(PASSWORD_HASH_PARAMETERS);

/** The hasher under PASSWORD_HASH_PARAMETERS, as sign-up, sign-in and password changes use it. */
export const hashPassword = defaultHasher.hash;
export const verifyPassword = defaultHasher.verify;
export const verifyUnknownAccountPassword = defaultHasher.verifyUnknownAccount;
export const needsRehash = defaultHasher.needsRehash;
