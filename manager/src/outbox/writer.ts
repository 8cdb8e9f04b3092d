import type { Command } from "@tjm/protocol";
import type postgres from "postgres";
import type { Sql, TransactionSql } from "../platform/db.ts";
import type { OutboxRow } from "./relay.ts";

/** What one outbox row announces; `subject` is below the prefix and defaults to the event subject of `kind`. */
export interface Announcement {
  kind: string;
  /** A jsonb expression; over the rows of `from` when one is given. */
  payload: postgres.Fragment;
  from?: postgres.Fragment;
  subject?: string;
}

/**
 * The one `insert into outbox`: an announcement per row of `from` (one without it). A
 * fragment, so a statement that must stay one round trip (submitting a job) writes its row
 * in a CTE, and the relay publishes it if and only if that statement commits.
 */
export function outboxInsert(sql: Sql | TransactionSql, announcement: Announcement): postgres.Fragment {
  const { kind, payload, from, subject = `events.${kind}` } = announcement;
  return sql`
    insert into outbox (kind, subject, payload)
    select ${kind}, ${subject}, ${payload} ${from ? sql`from ${from}` : sql``}`;
}

interface InsertedRow {
  id: string;
  messageId: string;
  createdAt: Date;
}

/** An announcement's insert, built and not yet sent, and the row it becomes once inserted. */
export interface PendingAnnouncement {
  statement: postgres.PendingQuery<InsertedRow[]>;
  row(inserted: readonly InsertedRow[]): OutboxRow;
}

/** An announcement's insert, for enqueueOutbox and for a caller that sends it with others (pendingCommand). */
function pendingAnnouncement(
  tx: Sql | TransactionSql,
  kind: string,
  payload: Record<string, unknown>,
  subject = `events.${kind}`,
): PendingAnnouncement {
  return {
    statement: tx<InsertedRow[]>`
      ${outboxInsert(tx, { kind, payload: tx`${tx.json(payload as never)}`, subject })}
      returning id, message_id, created_at`,
    row: ([inserted]) => {
      if (!inserted) throw new Error(`the outbox row of ${kind} was not written`);
      return { ...inserted, kind, subject, payload };
    },
  };
}

/**
 * Records an announcement in the caller's transaction: it is published (by the relay) if
 * and only if the change commits. `kind` doubles as the event subject below the prefix.
 */
export async function enqueueOutbox(
  tx: TransactionSql,
  kind: string,
  payload: Record<string, unknown>,
  subject = `events.${kind}`,
): Promise<OutboxRow> {
  const pending = pendingAnnouncement(tx, kind, payload, subject);
  return pending.row(await pending.statement);
}

/** sendCommand's statement, built and not yet sent, and its row once inserted (a lease the dispatcher publishes). */
export function pendingCommand(
  tx: Sql | TransactionSql,
  workerId: string,
  command: Command,
): PendingAnnouncement {
  return pendingAnnouncement(tx, "worker.command", command as never, `workers.${workerId}.commands`);
}

/**
 * Sends a command to a Worker's durable consumer, the same way: published only if the change
 * commits.
 */
export async function sendCommand(tx: TransactionSql, workerId: string, command: Command): Promise<void> {
  await pendingCommand(tx, workerId, command).statement;
}
