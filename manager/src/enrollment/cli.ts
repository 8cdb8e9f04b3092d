/**
 * `enrollment-tokens issue`: a Worker enrollment token from the command line, for a deployment
 * that enrolls its first Worker before any operator can sign in (compose.yaml's token services).
 * Same bounds and storage as POST /api/v1/operations/enrollment-tokens, printed once as one
 * JSON line of the same shape.
 */
import type { z } from "@hono/zod-openapi";
import type { Config } from "../config.ts";
import type { Sql } from "../platform/db.ts";
import { IssueEnrollmentTokenBodySchema } from "./issue.ts";
import { insertEnrollmentToken } from "./store.ts";
import { createTokenHasher, generateEnrollmentToken } from "./tokens.ts";

export const ISSUE_USAGE =
  "usage: manager enrollment-tokens issue [--pool cpu|nvidia|intel|amd] [--ttl-seconds 60..604800] [--label TEXT]";

/** `created_by` of a token issued here: no operator is signed in to name. */
export const CLI_ISSUER = "cli";

export interface EnrollmentCommandContext {
  config: Pick<Config, "ENROLLMENT_TOKEN_SECRET">;
  openDatabase(): Sql;
  writeStdout(line: string): void;
  writeStderr(line: string): void;
  exit(code: number): never;
}

type IssueRequest = z.infer<typeof IssueEnrollmentTokenBodySchema>;

export type ParsedIssue = { ok: true; request: IssueRequest } | { ok: false; problems: string[] };

const OPTIONS = ["pool", "ttl-seconds", "label"] as const;
type Option = (typeof OPTIONS)[number];
const FLAG_OF_FIELD: Record<string, Option> = { pool: "pool", ttlSeconds: "ttl-seconds", label: "label" };

/** `--name value` or `--name=value`, each option at most once; every problem is listed. */
export function parseIssueArguments(args: string[]): ParsedIssue {
  const given = new Map<Option, string>();
  const problems: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] as string;
    if (!arg.startsWith("--")) {
      problems.push(`unexpected argument '${arg}'`);
      continue;
    }
    const equals = arg.indexOf("=");
    const name = equals < 0 ? arg.slice(2) : arg.slice(2, equals);
    if (!(OPTIONS as readonly string[]).includes(name)) {
      problems.push(`unknown option --${name}`);
      // Its value, if it has one, is not a second problem.
      if (equals < 0 && args[index + 1] !== undefined && !args[index + 1]?.startsWith("--")) index += 1;
      continue;
    }
    let value: string | undefined = arg.slice(equals + 1);
    if (equals < 0) {
      const next = args[index + 1];
      value = next === undefined || next.startsWith("--") ? undefined : next;
      if (value !== undefined) index += 1;
    }
    if (value === undefined || value === "") problems.push(`--${name} needs a value`);
    else if (given.has(name as Option)) problems.push(`--${name} is given more than once`);
    else given.set(name as Option, value);
  }
  const ttl = given.get("ttl-seconds");
  if (ttl !== undefined && !/^\d+$/.test(ttl))
    problems.push("--ttl-seconds must be a whole number of seconds");
  if (problems.length > 0) return { ok: false, problems };

  const result = IssueEnrollmentTokenBodySchema.safeParse({
    ttlSeconds: ttl === undefined ? undefined : Number(ttl),
    pool: given.get("pool"),
    label: given.get("label"),
  });
  if (result.success) return { ok: true, request: result.data };
  return {
    ok: false,
    problems: result.error.issues.map(
      (issue) => `--${FLAG_OF_FIELD[String(issue.path[0])]}: ${issue.message}`,
    ),
  };
}

export async function runEnrollmentTokensIssue(
  context: EnrollmentCommandContext,
  args: string[],
): Promise<void> {
  const parsed = parseIssueArguments(args);
  if (!parsed.ok) {
    context.writeStderr(`enrollment-tokens issue: ${parsed.problems.join("; ")}\n${ISSUE_USAGE}`);
    context.exit(2);
  }
  const { request } = parsed;
  const token = generateEnrollmentToken();
  const id = crypto.randomUUID();
  const tokenHash = await createTokenHasher(context.config.ENROLLMENT_TOKEN_SECRET)(token);
  const sql = context.openDatabase();
  try {
    const { expiresAt } = await insertEnrollmentToken(sql, {
      id,
      tokenHash,
      pool: request.pool,
      label: request.label,
      createdBy: CLI_ISSUER,
      ttlSeconds: request.ttlSeconds,
    });
    context.writeStdout(
      JSON.stringify({
        id,
        token,
        expiresAt: expiresAt.toISOString(),
        pool: request.pool ?? null,
        label: request.label ?? null,
      }),
    );
  } finally {
    await sql.end();
  }
}
