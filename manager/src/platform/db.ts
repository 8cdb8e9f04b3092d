import postgres from "postgres";

export type Sql = postgres.Sql;
export type TransactionSql = postgres.TransactionSql;
export type PendingQuery<T extends readonly postgres.MaybeRow[]> = postgres.PendingQuery<T>;
/** A statement built but not yet sent (postgres.js sends one when it is awaited or executed). */
export interface Statement<T = unknown> extends Promise<T> {
  execute(): unknown;
}
type Results<T extends readonly Statement[]> = { -readonly [K in keyof T]: Awaited<T[K]> };

export interface DatabaseOptions {
  url: string;
  schema: string;
  poolMax: number;
  applicationName?: string;
  /** Told each statement's text as it is sent (postgres.js `debug`): tests compare what requests issue. */
  onStatement?: (statement: string) => void;
}

/**
 * Longest wait, in seconds, before a connection of the pool tries PostgreSQL again. The
 * driver's default grows to 20 s over the failures of every connection of the pool, and a
 * query handed to a connection waits out its delay even once PostgreSQL is back.
 */
const MAX_RECONNECT_DELAY_S = 1;

/**
 * The one postgres.js client: camelCase columns, TJM's schema first on the search path.
 * postgres.js is patched at install (patches/postgres+3.4.9.patch, docs/architecture.md, "PostgreSQL driver").
 */
export function createSql(options: DatabaseOptions): Sql {
  return postgres(options.url, {
    max: options.poolMax,
    connect_timeout: 5,
    idle_timeout: 60,
    // The driver's curve (3^retries / 100 s, jittered to 50–100 %), capped.
    backoff: (retries) => (0.5 + Math.random() / 2) * Math.min(3 ** retries / 100, MAX_RECONNECT_DELAY_S),
    // Column names only: JSON values (the stored plan) are returned exactly as stored.
    transform: { column: { from: postgres.toCamel, to: postgres.fromCamel } },
    onnotice: () => {},
    ...(options.onStatement
      ? { debug: (_connection: number, statement: string) => options.onStatement?.(statement) }
      : {}),
    connection: {
      search_path: options.schema,
      application_name: options.applicationName ?? "tjm-manager",
    },
  });
}

/** The pool's state, for the metrics. */
export interface PoolState {
  max: number;
  /** Connections with a socket. */
  open: number;
  /** Connections in a query, or held by a transaction or reserve(). */
  busy: number;
  /** Queries waiting for a connection. */
  waiting: number;
}

/**
 * postgres.js exposes no pool state (porsager/postgres#443, open); the install patch adds
 * `sql.pool()`. Undefined without the patch.
 */
export function poolState(sql: Sql): PoolState | undefined {
  return (sql as Sql & { pool?: () => PoolState }).pool?.();
}

/**
 * Sends the statements at once, in this order, on the caller's connection (a transaction's),
 * without waiting between them: one round trip for all; resolves with their results. Not a
 * reserved connection with BEGIN and COMMIT in the same trips: a `reserve()` pending while
 * PostgreSQL restarts leaves postgres.js's pool hung (every query after it waits forever).
 */
export function sendTogether<T extends readonly Statement[]>(...statements: T): Promise<Results<T>> {
  // execute() queues each on the connection in call order; awaiting each through Promise.all
  // alone would order them by when their then() runs.
  for (const statement of statements) statement.execute();
  return Promise.all(statements) as Promise<Results<T>>;
}

/** SQLSTATE codes that store.ts files translate into domain errors. */
export const pgErrorCode = {
  uniqueViolation: "23505",
  foreignKeyViolation: "23503",
  invalidTextRepresentation: "22P02",
} as const;

export function isPgError(err: unknown, code: string): boolean {
  return err instanceof postgres.PostgresError && err.code === code;
}

/** Rejects after `ms` so a hung dependency cannot hang the caller. */
export async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
