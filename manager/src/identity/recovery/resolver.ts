/**
 * The recovery resolver: the one place that learns whether a code request names an account that
 * can receive a code, off every request path. For each new challenge it looks the identifier up;
 * an enabled account with the address (or a verified phone) gets a code (stored as its HMAC in
 * the challenge) and a message in the outbox, in one transaction, within the destination's
 * limit. Every other challenge is marked resolved without a code: every code typed for it is
 * wrong, counted like any other. Woken after each request, and by its tick for other replicas'.
 */
import { chooseLocale } from "@tjm/platform/locale";
import type { TransactionSql } from "../../platform/db.ts";
import { WakeableLoop } from "../../platform/loop.ts";
import { findRecoveryRecipient } from "../accounts/store.ts";
import { generateOneTimeCode, oneTimeCodeHmac } from "../one-time-codes.ts";
import type { RecoveryContext } from "./deps.ts";
import { claimUnresolved, deleteSpent, resolveChallenge, type UnresolvedChallenge } from "./store.ts";

const BATCH_SIZE = 20;
/** Spent rows are deleted at most this often. */
const CLEANUP_INTERVAL_MS = 10 * 60_000;

export class RecoveryResolver extends WakeableLoop {
  private lastCleanup = 0;

  constructor(
    private readonly context: RecoveryContext,
    private readonly windowSeconds: number,
    tickMs: number,
  ) {
    super({ logger: context.logger, tickMs }, "resolving recovery challenges");
  }

  protected async pass(): Promise<boolean> {
    const { sql, delivery } = this.context;
    if (Date.now() - this.lastCleanup > CLEANUP_INTERVAL_MS) {
      this.lastCleanup = Date.now();
      await deleteSpent(sql, this.windowSeconds);
    }
    let messages = 0;
    const claimed = await sql.begin(async (tx) => {
      const challenges = await claimUnresolved(tx, BATCH_SIZE);
      for (const challenge of challenges) {
        const code = await this.codeFor(tx, challenge);
        if (code) {
          await delivery.enqueueMessage(tx, {
            channel: challenge.channel,
            recipient: code.recipient,
            locale: code.locale,
            template: "recovery-code",
            params: { code: code.code, minutes: challenge.minutesLeft },
          });
          messages++;
        }
        await resolveChallenge(
          tx,
          challenge.id,
          code && { accountId: code.accountId, codeHmac: code.codeHmac, locale: code.locale },
        );
      }
      return challenges.length;
    });
    if (messages > 0) delivery.wake();
    return claimed === BATCH_SIZE;
  }

  /** A code and where it goes, or undefined when this challenge gets none. */
  private async codeFor(tx: TransactionSql, challenge: UnresolvedChallenge) {
    const { delivery, limiter, oneTimeCodeKey, logger } = this.context;
    if (challenge.over) return undefined;
    const key = challenge.identifierKey.slice(challenge.identifierKey.indexOf(":") + 1);
    const found = await findRecoveryRecipient(tx, challenge.channel, key);
    if (!found) return undefined;
    if (!delivery.channels.has(challenge.channel)) {
      logger.warn("recovery code not sent: no transport is configured for its channel", {
        challengeId: challenge.id,
        channel: challenge.channel,
      });
      return undefined;
    }
    const limit = await limiter.message(`${challenge.channel}:${found.recipient}`);
    if (!limit.allowed) {
      logger.warn("recovery code not sent: its destination had its messages for the window", {
        challengeId: challenge.id,
        channel: challenge.channel,
      });
      return undefined;
    }
    const code = generateOneTimeCode();
    return {
      accountId: found.accountId,
      recipient: found.recipient,
      // The request's locale, else the one the account chose, else English.
      locale: chooseLocale({
        bodyLocale: challenge.locale ?? undefined,
        accountLocale: found.locale ?? undefined,
      }),
      code,
      codeHmac: oneTimeCodeHmac(oneTimeCodeKey, challenge.id, code),
    };
  }
}
