/**
 * The profile part of the accounts aggregate: what the account portal shows and changes about a
 * person. Every change commits with its audit row; a refused change writes its failure row.
 */

import type { Locale } from "@tjm/platform/locale";
import type { Sql } from "../../platform/db.ts";
import { type AuditDetails, writeAuditEvent } from "../audit.ts";
import type { Gender, ProfileChange } from "./profile-rules.ts";

export interface Profile {
  id: string;
  email: string;
  emailVerified: boolean;
  phone: string | null;
  phoneVerified: boolean;
  displayName: string;
  /** YYYY-MM-DD. */
  dateOfBirth: string | null;
  gender: Gender | null;
  genderDescription: string | null;
  locale: Locale | null;
  avatarKey: string | null;
  roles: string[];
  createdAt: Date;
  updatedAt: Date;
}

/** The account's profile with its roles, in one query; undefined when there is no such account. */
export async function findProfile(sql: Sql, accountId: string): Promise<Profile | undefined> {
  const [row] = await sql<Profile[]>`
    select a.id, a.email, a.email_verified, a.phone, a.phone_verified, a.display_name,
      to_char(a.date_of_birth, 'YYYY-MM-DD') as date_of_birth, a.gender, a.gender_description,
      a.locale, a.avatar_key, a.created_at, a.updated_at,
      array(select r.role from account_roles r where r.account_id = a.id order by r.role) as roles
    from accounts a where a.id = ${accountId}`;
  return row;
}

/** The stored gender, which decides whether a gender description may be given. */
export async function findGender(sql: Sql, accountId: string): Promise<Gender | null> {
  const [row] = await sql<{ gender: Gender | null }[]>`select gender from accounts where id = ${accountId}`;
  return row?.gender ?? null;
}

/** Who made a change, for its audit row. */
export interface ProfileActor {
  accountId: string;
  clientId: string;
}

/** The columns a change names; `avatarKey` is set by claimAvatar only. */
type ProfileColumns = ProfileChange & { avatarKey?: string | null };

/**
 * Stores a checked change and its audit row (the names of the fields changed, never their
 * values: a date of birth is not the trail's to keep). Answers the avatar key it replaced,
 * whose object the caller deletes once this has committed.
 */
export async function updateProfile(
  sql: Sql,
  actor: ProfileActor,
  change: ProfileColumns,
): Promise<{ replacedAvatarKey: string | null }> {
  const columns = Object.keys(change) as (keyof ProfileColumns)[];
  return sql.begin(async (tx) => {
    const [before] = await tx<{ avatarKey: string | null }[]>`
      select avatar_key from accounts where id = ${actor.accountId} for update`;
    if (columns.length > 0) {
      await tx`update accounts set ${tx(change, ...columns)}, updated_at = now() where id = ${actor.accountId}`;
    }
    await writeAuditEvent(tx, {
      event: "account.profile-updated",
      result: "success",
      actorAccountId: actor.accountId,
      clientId: actor.clientId,
      details: { accountId: actor.accountId, fields: columns.map(String) },
    });
    const replaced = before?.avatarKey ?? null;
    return {
      replacedAvatarKey: change.avatarKey !== undefined && replaced !== change.avatarKey ? replaced : null,
    };
  });
}

/** A refused change: its failure row, with the reason and the fields it named. */
export async function recordProfileRefused(
  sql: Sql,
  actor: ProfileActor,
  refusal: { reason: string; fields: string[] } & AuditDetails,
): Promise<void> {
  await writeAuditEvent(sql, {
    event: "account.profile-updated",
    result: "failure",
    actorAccountId: actor.accountId,
    clientId: actor.clientId,
    details: { accountId: actor.accountId, ...refusal },
  });
}
