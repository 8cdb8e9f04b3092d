/**
 * The message outbox (message_outbox): the only writer of its rows. A message is written in
 * the transaction of what caused it and claimed by a sender with `for update skip locked`;
 * a claim pushes the row's next attempt past the send timeout, so a sender that dies mid-send
 * leaves the row to be claimed again (at least once, never lost).
 */

import type { Locale } from "@tjm/platform/locale";
import type { Sql, TransactionSql } from "../../platform/db.ts";
import type { RenderedEmail, RenderedSms, StoredParams, TemplateName } from "./templates.ts";

export const CHANNELS = ["email", "sms"] as const;
export type Channel = (typeof CHANNELS)[number];

export interface NewMessage {
  /** Chosen by the caller: the rendered footer names it. */
  id: string;
  channel: Channel;
  recipient: string;
  locale: Locale;
  template: TemplateName;
  params: StoredParams;
  body: RenderedEmail | RenderedSms;
  holdsCode: boolean;
  /** From now on the database's clock, as every other time of the table; undefined: never. */
  expiresInMs: number | undefined;
}

export interface ClaimedMessage {
  id: string;
  channel: Channel;
  recipient: string;
  locale: Locale;
  template: TemplateName;
  body: RenderedEmail | RenderedSms;
  /** This attempt's number, from 1. */
  attempts: number;
}

export async function insertMessage(tx: TransactionSql, message: NewMessage): Promise<string> {
  const [row] = await tx<{ id: string }[]>`
    insert into message_outbox (id, channel, recipient, locale, template, params, body, holds_code, expires_at)
    values (${message.id}, ${message.channel}, ${message.recipient}, ${message.locale}, ${message.template},
      ${tx.json(message.params)}, ${tx.json(message.body as never)}, ${message.holdsCode},
      now() + ${message.expiresInMs ?? null} * interval '1 millisecond')
    returning id`;
  return (row as { id: string }).id;
}

/** What a finished row keeps: a message holding a code loses its params and body. */
const forgetCode = (sql: Sql) => sql`
  params = case when holds_code then null else params end,
  body = case when holds_code then null else body end`;

/**
 * Up to `limit` due messages of the given channels, each claimed for `claimMs` (its attempt
 * counted now: a send that never reports back still used one).
 */
export async function claimDueMessages(
  sql: Sql,
  channels: readonly Channel[],
  limit: number,
  claimMs: number,
): Promise<ClaimedMessage[]> {
  return sql<ClaimedMessage[]>`
    update message_outbox set attempts = attempts + 1,
      next_attempt_at = now() + ${claimMs} * interval '1 millisecond'
    where id in (
      select id from message_outbox
      where next_attempt_at <= now() and channel = any(${channels as string[]}::text[])
        and (expires_at is null or expires_at > now())
      order by next_attempt_at
      limit ${limit}
      for update skip locked)
    returning id, channel, recipient, locale, template, body, attempts`;
}

/** Messages whose code expired before they could be sent: failed, their code deleted. */
export async function expireMessages(sql: Sql): Promise<{ id: string; channel: Channel }[]> {
  return sql<{ id: string; channel: Channel }[]>`
    update message_outbox set failed_at = now(), next_attempt_at = null,
      failure_reason = 'expired before it could be sent', ${forgetCode(sql)}
    where next_attempt_at is not null and expires_at <= now()
    returning id, channel`;
}

export async function markSent(sql: Sql, id: string): Promise<void> {
  await sql`
    update message_outbox set sent_at = now(), next_attempt_at = null, failure_reason = null, ${forgetCode(sql)}
    where id = ${id} and next_attempt_at is not null`;
}

export async function markRetry(sql: Sql, id: string, delayMs: number, reason: string): Promise<void> {
  await sql`
    update message_outbox set next_attempt_at = now() + ${delayMs} * interval '1 millisecond',
      failure_reason = ${reason}
    where id = ${id} and next_attempt_at is not null`;
}

export async function markFailed(sql: Sql, id: string, reason: string): Promise<void> {
  await sql`
    update message_outbox set failed_at = now(), next_attempt_at = null, failure_reason = ${reason},
      ${forgetCode(sql)}
    where id = ${id} and next_attempt_at is not null`;
}
