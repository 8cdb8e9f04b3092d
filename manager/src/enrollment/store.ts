import type { Sql, TransactionSql } from "../platform/db.ts";

export interface NewEnrollmentToken {
  id: string;
  tokenHash: Uint8Array;
  pool: string | undefined;
  label: string | undefined;
  createdBy: string;
  ttlSeconds: number;
}

export async function insertEnrollmentToken(
  sql: Sql,
  token: NewEnrollmentToken,
): Promise<{ expiresAt: Date }> {
  const [row] = await sql<{ expiresAt: Date }[]>`
    insert into enrollment_tokens (id, token_hash, pool, label, created_by, expires_at)
    values (${token.id}, ${token.tokenHash}, ${token.pool ?? null}, ${token.label ?? null}, ${token.createdBy},
            now() + make_interval(secs => ${token.ttlSeconds}))
    returning expires_at`;
  return row as { expiresAt: Date };
}

/**
 * Marks the token used if it exists, is unused and unexpired — one statement, so of any
 * number of concurrent attempts exactly one gets the row. Unknown, used and expired tokens
 * all come back undefined: callers cannot tell them apart, and neither can an attacker.
 */
export async function consumeEnrollmentToken(
  sql: Sql | TransactionSql,
  tokenHash: Uint8Array,
): Promise<{ id: string; pool: string | null; label: string | null } | undefined> {
  const [row] = await sql<{ id: string; pool: string | null; label: string | null }[]>`
    update enrollment_tokens set used_at = now()
    where token_hash = ${tokenHash} and used_at is null and expires_at > now()
    returning id, pool, label`;
  return row;
}
