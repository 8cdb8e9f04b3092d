/**
 * The sign-in decision, whole: limits, the identifier's and password's bounds, the password
 * check (with a dummy verification for an unknown or disabled account), the rehash, the role a
 * requested audience needs, and an audit row for every outcome. The interaction page only
 * renders the outcome; every way to sign in asks here.
 */
import type { Logger } from "@tjm/platform";
import type { Sql } from "../../platform/db.ts";
import { writeAuditEvent } from "../audit.ts";
import { emailKeyProblem } from "../identifiers.ts";
import { MAX_PASSWORD_LENGTH } from "../input-bounds.ts";
import {
  hashPassword,
  needsRehash,
  verifyPassword,
  verifyUnknownAccountPassword,
} from "../password-hashing.ts";
import { accountMayHold, type ResourceName, requiredRole } from "../resources.ts";
import type { SignInLimiter } from "./sign-in-limits.ts";
import { findAccount, findSignInCandidate, replacePasswordHash } from "./store.ts";

export interface SignInAttempt {
  email: string;
  password: string;
  /** The client's IP address, as the limiter counts it; undefined when unknown. */
  address: string | undefined;
  clientId: string | undefined;
  /** The resources the sign-in asks tokens for. */
  resources: readonly ResourceName[];
}

export type SignInOutcome =
  | { outcome: "signed-in"; accountId: string }
  /** No account can have such an address or password: refused before it is counted or hashed. */
  | { outcome: "invalid-request"; description: string }
  | { outcome: "too-many-attempts"; retryAfterSeconds: number }
  | { outcome: "invalid-credentials" }
  /** The password was right, but a requested resource needs a role the account does not hold. */
  | { outcome: "role-missing"; description: string };

export interface SignIns {
  /**
   * Seconds until the address's refusal ends (its audit row written), undefined when it is not
   * refused: asked before the form is read, so a refused address has none of its body read.
   */
  addressRefusal(address: string | undefined, clientId: string | undefined): Promise<number | undefined>;
  verify(attempt: SignInAttempt): Promise<SignInOutcome>;
}

export function createSignIns(deps: { sql: Sql; limiter: SignInLimiter; logger: Logger }): SignIns {
  const { sql, limiter, logger } = deps;

  async function tooManyAttempts(
    address: string | undefined,
    clientId: string | undefined,
    retryAfterSeconds: number,
  ): Promise<SignInOutcome & { outcome: "too-many-attempts" }> {
    await writeAuditEvent(sql, {
      event: "auth.sign-in",
      result: "failure",
      clientId,
      address,
      details: { reason: "too-many-attempts" },
    });
    logger.info("sign-in refused", { reason: "too-many-attempts", clientId, address });
    return { outcome: "too-many-attempts", retryAfterSeconds };
  }

  return {
    async addressRefusal(address, clientId) {
      const refusedFor = await limiter.addressRefusal(address ?? "unknown");
      if (refusedFor === undefined) return undefined;
      return (await tooManyAttempts(address, clientId, refusedFor)).retryAfterSeconds;
    },

    async verify({ email, password, address, clientId, resources }) {
      const identifierProblem = emailKeyProblem(email);
      if (identifierProblem || password.length > MAX_PASSWORD_LENGTH) {
        return {
          outcome: "invalid-request",
          description:
            identifierProblem?.message ?? `a password is at most ${MAX_PASSWORD_LENGTH} characters`,
        };
      }
      const reserved = await limiter.reserve({ email, address: address ?? "unknown" });
      if (!reserved.allowed) return tooManyAttempts(address, clientId, reserved.retryAfterSeconds);
      const candidate = await findSignInCandidate(sql, email);
      // An unknown or disabled account costs one password verification too: the answer and its
      // timing are the same whether or not the account exists.
      const verified =
        candidate?.passwordHash && !candidate.disabled
          ? await verifyPassword(candidate.passwordHash, password)
          : await verifyUnknownAccountPassword(password).then(() => false);
      if (!verified || !candidate) {
        await limiter.failed(reserved.reservation);
        const reason = candidate?.disabled ? "account-disabled" : "invalid-credentials";
        await writeAuditEvent(sql, {
          event: "auth.sign-in",
          result: "failure",
          actorAccountId: candidate?.id,
          clientId,
          address,
          details: { reason },
        });
        logger.info("sign-in refused", { reason, accountId: candidate?.id, clientId, address });
        return { outcome: "invalid-credentials" };
      }
      await limiter.succeeded(reserved.reservation);
      if (candidate.passwordHash && needsRehash(candidate.passwordHash)) {
        await replacePasswordHash(sql, candidate.id, await hashPassword(password));
      }
      const account = await findAccount(sql, candidate.id);
      // A request naming resources of which the account may hold none (a client asking only for
      // the operations audience, signing in a non-operator) ends here; one naming any it may hold
      // goes on, and its grant and tokens leave the others out (provider/configuration.ts).
      const roles = account?.roles ?? [];
      if (resources.length > 0 && !resources.some((name) => accountMayHold({ name }, roles))) {
        const needed = [...new Set(resources.flatMap((name) => requiredRole({ name }) ?? []))];
        await writeAuditEvent(sql, {
          event: "auth.sign-in",
          result: "failure",
          actorAccountId: candidate.id,
          clientId,
          address,
          details: { reason: "missing-role", roles: needed },
        });
        return {
          outcome: "role-missing",
          description: `this account does not hold the ${needed.join(" or ")} role the ${resources.join(" or ")} audience requires`,
        };
      }
      await writeAuditEvent(sql, {
        event: "auth.sign-in",
        result: "success",
        actorAccountId: candidate.id,
        clientId,
        address,
      });
      logger.info("sign-in succeeded", { accountId: candidate.id, clientId, address });
      return { outcome: "signed-in", accountId: candidate.id };
    },
  };
}
