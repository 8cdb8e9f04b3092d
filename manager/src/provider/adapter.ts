/**
 * oidc-provider's storage (its Adapter) over PostgreSQL: every model's records in
 * oidc_records, clients read from oauth_clients. Times come from the database's clock, which
 * every Manager replica shares.
 */
import { type Adapter, type AdapterFactory, type AdapterPayload, errors } from "oidc-provider";
import { findClientMetadata } from "../identity/clients/index.ts";
import {
  containsNul,
  isBoundedIdentifier,
  MAX_CLIENT_ID_LENGTH,
  MAX_RECORD_ID_LENGTH,
} from "../identity/input-bounds.ts";
import { sessionSids } from "../identity/sessions/payload.ts";
import type { Sql } from "../platform/db.ts";

/** Models whose records belong to a grant: revoking the grant removes them all. */
const GRANT_BOUND_MODELS = new Set([
  "AccessToken",
  "AuthorizationCode",
  "RefreshToken",
  "DeviceCode",
  "BackchannelAuthenticationRequest",
]);

/**
 * Ids and codes arrive from requests (tokens presented, cookies, user codes): one that no record
 * could have is not looked up, so it is unknown rather than a database error.
 */
function isRecordId(id: unknown): id is string {
  return isBoundedIdentifier(id, MAX_RECORD_ID_LENGTH);
}

class RecordAdapter implements Adapter {
  constructor(
    private readonly sql: Sql,
    private readonly model: string,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    // Request parameters (state, nonce, login_hint …) are kept in interactions and codes.
    if (containsNul(payload))
      throw new errors.InvalidRequest("request parameters must not contain NUL characters");
    const grantId = GRANT_BOUND_MODELS.has(this.model) ? (payload.grantId ?? null) : null;
    // The sids a Session hands out (a token's `sid` claim), one per client it signed in to.
    const sids = this.model === "Session" ? sessionSids(payload) : null;
    // A consumed record stays consumed: a rewrite of its payload must not bring it back.
    await this.sql`
      insert into oidc_records
        (model, id, payload, grant_id, uid, user_code, account_id, sids, expires_at)
      values (
        ${this.model}, ${id}, ${this.sql.json(payload as never)}, ${grantId},
        ${payload.uid ?? null}, ${payload.userCode ?? null}, ${payload.accountId ?? null}, ${sids},
        now() + make_interval(secs => ${expiresIn ?? null}::double precision)
      )
      on conflict (model, id) do update set
        payload = excluded.payload,
        grant_id = excluded.grant_id,
        uid = excluded.uid,
        user_code = excluded.user_code,
        account_id = excluded.account_id,
        sids = excluded.sids,
        expires_at = excluded.expires_at`;
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (!isRecordId(id)) return undefined;
    const [row] = await this.sql<{ payload: AdapterPayload }[]>`
      select ${this.payloadColumn()} from oidc_records
      where model = ${this.model} and id = ${id} and ${this.unexpired()}`;
    return row?.payload;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    if (!isRecordId(uid)) return undefined;
    const [row] = await this.sql<{ payload: AdapterPayload }[]>`
      select ${this.payloadColumn()} from oidc_records
      where model = ${this.model} and uid = ${uid} and ${this.unexpired()}`;
    return row?.payload;
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    if (!isRecordId(userCode)) return undefined;
    const [row] = await this.sql<{ payload: AdapterPayload }[]>`
      select ${this.payloadColumn()} from oidc_records
      where model = ${this.model} and user_code = ${userCode} and ${this.unexpired()}`;
    return row?.payload;
  }

  async consume(id: string): Promise<void> {
    if (!isRecordId(id)) throw new errors.InvalidGrant(`${this.model} not found`);
    const marked = await this.sql`
      update oidc_records set consumed_at = now()
      where model = ${this.model} and id = ${id} and consumed_at is null`;
    // Requests that found the record unconsumed race to here: one use, whoever marked it first.
    if (marked.count === 0) throw new errors.InvalidGrant(`${this.model} already consumed`);
  }

  async destroy(id: string): Promise<void> {
    if (!isRecordId(id)) return;
    await this.sql`delete from oidc_records where model = ${this.model} and id = ${id}`;
  }

  /** Every record of the grant, whichever model's adapter is asked (the provider asks several). */
  async revokeByGrantId(grantId: string): Promise<void> {
    await this.sql`delete from oidc_records where grant_id = ${grantId}`;
  }

  /** The payload as stored, with `consumed` (epoch seconds) once the record was consumed. */
  private payloadColumn() {
    return this.sql`
      case when consumed_at is null then payload
      else payload || jsonb_build_object('consumed', floor(extract(epoch from consumed_at))::bigint)
      end as payload`;
  }

  /** A record past its expiry is never found, whether or not the purge has run. */
  private unexpired() {
    return this.sql`(expires_at is null or expires_at > now())`;
  }
}

/**
 * Clients are written by TJM's client management, never by the provider (dynamic
 * registration stays off): the provider only reads them.
 */
class ClientAdapter implements Adapter {
  constructor(private readonly sql: Sql) {}

  /**
   * Every endpoint that names a client (authorization, token, logout, introspection …) looks it
   * up here through Client.find: a client_id no client can have is unknown, which the provider
   * answers with its invalid_client error.
   */
  find(clientId: string): Promise<AdapterPayload | undefined> {
    if (!isBoundedIdentifier(clientId, MAX_CLIENT_ID_LENGTH)) return Promise.resolve(undefined);
    return findClientMetadata(this.sql, clientId);
  }

  upsert(): Promise<void> {
    return Promise.reject(new Error("oauth_clients are written by client management, not by the provider"));
  }
  destroy(): Promise<void> {
    return this.upsert();
  }
  consume(): Promise<void> {
    return this.upsert();
  }
  findByUid(): Promise<undefined> {
    return Promise.resolve(undefined);
  }
  findByUserCode(): Promise<undefined> {
    return Promise.resolve(undefined);
  }
  revokeByGrantId(): Promise<void> {
    return Promise.resolve();
  }
}

/** The provider's `adapter` setting: one adapter per model name. */
export function postgresAdapter(sql: Sql): AdapterFactory {
  return (model) => (model === "Client" ? new ClientAdapter(sql) : new RecordAdapter(sql, model));
}

/** Deletes records past their expiry (never needed for correctness: reads skip them). */
export async function purgeExpiredRecords(sql: Sql, limit = 10_000): Promise<number> {
  const deleted = await sql`
    delete from oidc_records where ctid in (
      select ctid from oidc_records where expires_at <= now() limit ${limit}
    )`;
  return deleted.count;
}
