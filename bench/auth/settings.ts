import { positiveInteger, positiveNumber, positiveNumbers } from "../shared/env.ts";

export interface AuthSettings {
  /** Sign-ins timed one after the other (authorization code + PKCE, headless). */
  signIns: number;
  /** Concurrent callers of the token endpoint per client_credentials level. */
  tokenConcurrency: number[];
  /** Measured seconds per client_credentials level. */
  tokenSeconds: number;
  /** Other confidential clients stored beside the tenant client while tokens are measured. */
  storedClients: number;
}

/** The standing-check comparison reuses the submit knobs (BENCH_CONCURRENCY, BENCH_SECONDS). */
export function readAuthSettings(env: NodeJS.ProcessEnv): AuthSettings {
  return {
    signIns: positiveInteger(env, "BENCH_AUTH_SIGN_INS", "50"),
    tokenConcurrency: positiveNumbers(env, "BENCH_AUTH_TOKEN_CONCURRENCY", "1,16,64").map(Math.round),
    tokenSeconds: positiveNumber(env, "BENCH_AUTH_TOKEN_SECONDS", "5"),
    storedClients: positiveInteger(env, "BENCH_AUTH_STORED_CLIENTS", "1000"),
  };
}
