import type { TransactionSql } from "./db.ts";

/**
 * Records an announcement in the caller's transaction: it is published (by the relay) if
 * and only if the change commits. `kind` doubles as the event subject below the prefix.
 */
export async function enqueueOutbox(
  tx: TransactionSql,
  kind: string,
  payload: Record<string, unknown>,
  subject = `events.${kind}`,
): Promise<void> {
  await tx`insert into outbox (kind, subject, payload) values (${kind}, ${subject}, ${tx.json(payload as never)})`;
}
