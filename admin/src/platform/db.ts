import postgres from "postgres";

export type Sql = postgres.Sql;

/** The console's postgres.js client: camelCase columns, its schema first on the search path. */
export function createSql(options: { url: string; schema: string; poolMax: number }): Sql {
  return postgres(options.url, {
    max: options.poolMax,
    connect_timeout: 5,
    idle_timeout: 60,
    transform: { column: { from: postgres.toCamel, to: postgres.fromCamel } },
    onnotice: () => {},
    connection: { search_path: options.schema, application_name: "tjm-admin" },
  });
}
