/**
 * Delivers the back-channel logouts that ending sessions queued (backchannel_logout_outbox).
 *
 * Node only: the logout token is signed and sent by oidc-provider itself, through the client it
 * finds (`client.backchannelLogout(sub, sid)`), so it carries the provider's keys and claims and
 * goes through the provider's `fetch`, which refuses private and loopback addresses unless the
 * host is in PROVIDER_PRIVATE_NETWORK_HOSTS. A Deno Manager has no provider: it starts no sender
 * and its rows wait in PostgreSQL for a Node Manager's.
 *
 * The provider sends once and throws on anything but 200/204; this sender retries with
 * exponential backoff and, after the last attempt (or at once for a refusal no retry can change),
 * marks the row failed with the reason, logs it and counts it. Rows are claimed with
 * `for update skip locked`, so several Managers share the work without sending one row twice
 * at the same time; a Manager that dies mid-send leaves its rows unclaimed for the next.
 */
import type { Logger } from "@tjm/platform";
import type { Sql, TransactionSql } from "../../platform/db.ts";
import { WakeableLoop } from "../../platform/loop.ts";

/** The provider's client, as far as sending its back-channel logout goes. */
export interface LogoutClient {
  backchannelLogoutUri?: string | undefined;
  /** Signs a logout token for (sub, sid) and POSTs it; rejects unless the client answered 200 or 204. */
  backchannelLogout(sub: string, sid: string): Promise<void>;
}

/** Finds clients through the provider (`provider.Client.find`), which reads oauth_clients. */
export interface LogoutClients {
  find(clientId: string): Promise<LogoutClient | undefined>;
}

export type LogoutOutcome = "sent" | "retried" | "failed";

export interface BackchannelLogoutSenderOptions {
  sql: Sql;
  clients: LogoutClients;
  logger: Logger;
  /** Attempts before a row is marked failed (BACKCHANNEL_LOGOUT_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** The wait after the first failure, doubled after each (BACKCHANNEL_LOGOUT_RETRY_BASE_MS). */
  retryBaseMs: number;
  /** Told each row's outcome (the Manager's metrics). */
  outcome?: (outcome: LogoutOutcome) => void;
  /** How often it looks for rows nobody woke it for (other Managers' commits). */
  pollMs?: number;
  batchSize?: number;
}

/** No wait between attempts grows past this. */
const MAX_RETRY_DELAY_MS = 10 * 60_000;
/** Sent and failed rows are kept this long (what was owed, and why it failed), then purged. */
const SETTLED_RETENTION_DAYS = 30;
const PURGE_EVERY_MS = 60 * 60_000;
const MIN_RECHECK_MS = 50;

/** The wait before attempt `attempts + 1`, after `attempts` failures (1, 2, …). */
export function retryDelayMs(attempts: number, baseMs: number): number {
  return Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** Math.max(0, attempts - 1));
}

/** A failure a retry cannot change: the row fails at once. */
class PermanentFailure extends Error {}

/** oidc-provider's guard destroys a socket to a special-use address with this message (helpers/fetch_request.js). */
const PRIVATE_ADDRESS_REFUSAL = "special-use IP address";

/** The reason stored and logged: the error's message and its causes' (fetch hides the socket's). */
export function failureReason(err: unknown): string {
  const parts: string[] = [];
  let current: unknown = err;
  for (let depth = 0; current instanceof Error && depth < 4; depth++) {
    parts.push(current.message);
    current = current.cause;
  }
  return parts.join(": ") || String(err);
}

interface OutboxRow {
  id: string;
  clientId: string;
  accountId: string;
  sid: string;
  attempts: number;
}

type Delivery = { ok: true } | { ok: false; reason: string; permanent: boolean };

export class BackchannelLogoutSender extends WakeableLoop {
  private readonly batchSize: number;
  private readonly pollMs: number;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private lastPurge = 0;

  constructor(private readonly options: BackchannelLogoutSenderOptions) {
    super({ tickMs: options.pollMs ?? 2000, logger: options.logger }, "sending back-channel logouts");
    this.batchSize = options.batchSize ?? 20;
    this.pollMs = options.pollMs ?? 2000;
  }

  override async stop(): Promise<void> {
    clearTimeout(this.retryTimer);
    await super.stop();
  }

  protected async pass(): Promise<boolean> {
    const { sql } = this.options;
    const claimed = await sql.begin(async (tx) => {
      const rows = await tx<OutboxRow[]>`
        select id, client_id, account_id, sid, attempts from backchannel_logout_outbox
        where sent_at is null and failed_at is null and next_attempt_at <= now()
        order by next_attempt_at, id
        limit ${this.batchSize}
        for update skip locked`;
      // In parallel: each send is bounded by the provider's own 2.5 s timeout.
      const deliveries = await Promise.all(rows.map((row) => this.deliver(row)));
      for (const [index, row] of rows.entries()) {
        await this.record(tx, row, deliveries[index] as Delivery);
      }
      return rows.length;
    });
    await this.scheduleRetry();
    await this.purgeSettled();
    return claimed === this.batchSize;
  }

  private async deliver(row: OutboxRow): Promise<Delivery> {
    try {
      const client = await this.options.clients.find(row.clientId);
      if (!client) throw new PermanentFailure("the client no longer exists");
      if (!client.backchannelLogoutUri)
        throw new PermanentFailure("the client has no back-channel logout URI");
      await client.backchannelLogout(row.accountId, row.sid);
      return { ok: true };
    } catch (err) {
      const reason = failureReason(err);
      return {
        ok: false,
        reason,
        permanent: err instanceof PermanentFailure || reason.includes(PRIVATE_ADDRESS_REFUSAL),
      };
    }
  }

  private async record(tx: TransactionSql, row: OutboxRow, delivery: Delivery): Promise<void> {
    const attempts = row.attempts + 1;
    if (delivery.ok) {
      await tx`update backchannel_logout_outbox set sent_at = now(), attempts = ${attempts}
               where id = ${row.id}`;
      this.options.outcome?.("sent");
      return;
    }
    const what = { clientId: row.clientId, accountId: row.accountId, attempts, reason: delivery.reason };
    if (delivery.permanent || attempts >= this.options.maxAttempts) {
      await tx`update backchannel_logout_outbox
               set failed_at = now(), attempts = ${attempts}, last_error = ${delivery.reason}
               where id = ${row.id}`;
      this.options.outcome?.("failed");
      this.options.logger.warn("back-channel logout failed; not retried", {
        ...what,
        hint: delivery.reason.includes(PRIVATE_ADDRESS_REFUSAL)
          ? "a client on a private address needs its host in PROVIDER_PRIVATE_NETWORK_HOSTS"
          : undefined,
      });
      return;
    }
    const delayMs = retryDelayMs(attempts, this.options.retryBaseMs);
    await tx`update backchannel_logout_outbox
             set attempts = ${attempts}, last_error = ${delivery.reason},
               next_attempt_at = now() + make_interval(secs => ${delayMs / 1000}::double precision)
             where id = ${row.id}`;
    this.options.outcome?.("retried");
    this.options.logger.debug("back-channel logout not delivered; retrying", { ...what, delayMs });
  }

  /** Wakes for the next retry when it is due before the next poll. */
  private async scheduleRetry(): Promise<void> {
    const [next] = await this.options.sql<{ dueInMs: number | null }[]>`
      select (extract(epoch from min(next_attempt_at) - now()) * 1000)::float8 as due_in_ms
      from backchannel_logout_outbox where sent_at is null and failed_at is null`;
    const dueInMs = next?.dueInMs;
    if (dueInMs === null || dueInMs === undefined || dueInMs >= this.pollMs) return;
    clearTimeout(this.retryTimer);
    // A row due now that this pass did not claim is another Manager's for the moment: no spinning.
    this.retryTimer = setTimeout(() => this.wake(), Math.max(MIN_RECHECK_MS, dueInMs));
  }

  private async purgeSettled(): Promise<void> {
    if (Date.now() - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = Date.now();
    await this.options.sql`
      delete from backchannel_logout_outbox
      where (sent_at is not null or failed_at is not null)
        and coalesce(sent_at, failed_at) < now() - make_interval(days => ${SETTLED_RETENTION_DAYS})`;
  }
}
