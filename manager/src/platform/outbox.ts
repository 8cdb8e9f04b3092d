import type { Command } from "@tjm/protocol";
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

/** Sends a command to a Worker's durable consumer, the same way: published only if the change commits. */
export async function sendCommand(tx: TransactionSql, workerId: string, command: Command): Promise<void> {
  await enqueueOutbox(tx, "worker.command", command as never, `workers.${workerId}.commands`);
}
