/**
 * `accounts create`, `accounts disable` and `clients create`. Loaded by runtime.ts only when one of them runs.
 */
import process from "node:process";
import type { Config } from "../config.ts";
import type { Sql } from "../platform/db.ts";
import { createAccountWithPassword } from "./accounts/create.ts";
import { AccountExistsError, disableAccount, UnknownAccountError } from "./accounts/store.ts";
import {
  type Parsed,
  parseAccountsCreate,
  parseAccountsDisable,
  parseClientsCreate,
  passwordFromStdin,
  passwordProblemText,
} from "./cli-arguments.ts";
import { registerClient, UnknownProjectError } from "./clients/index.ts";
import { readCommonPasswords } from "./common-passwords.ts";
import { tjmResources } from "./resources.ts";

export interface CommandContext {
  config: Config;
  openDatabase(): Sql;
  writeStdout(line: string): void;
  writeStderr(line: string): void;
  exit(code: number): never;
  usage: string;
}

function refuse(context: CommandContext, command: string, problems: string[]): never {
  context.writeStderr(`${command}: ${problems.join("; ")}\n${context.usage}`);
  context.exit(2);
}

function acceptedOrRefuse<T>(context: CommandContext, command: string, parsed: Parsed<T>): T {
  if (!parsed.ok) refuse(context, command, parsed.problems);
  return parsed.value;
}

/** All of stdin, or undefined when it is a terminal (the password would be echoed as typed). */
async function readStdin(): Promise<string | undefined> {
  if (process.stdin.isTTY) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}

export async function runAccountsCreate(context: CommandContext, args: string[]): Promise<void> {
  const command = "accounts create";
  const request = acceptedOrRefuse(context, command, parseAccountsCreate(args));
  const text = await readStdin();
  if (text === undefined)
    refuse(context, command, ["the password is read from stdin, which is a terminal here: pipe it in"]);
  const password = acceptedOrRefuse(context, command, passwordFromStdin(text));
  const sql = context.openDatabase();
  try {
    const created = await createAccountWithPassword(
      sql,
      { ...request, password },
      await readCommonPasswords(),
    );
    if (created.outcome === "policy-refused")
      refuse(context, command, created.problems.map(passwordProblemText));
    context.writeStdout(JSON.stringify(created.account));
  } catch (err) {
    if (err instanceof AccountExistsError) {
      context.writeStderr(err.message);
      context.exit(1);
    }
    throw err;
  } finally {
    await sql.end();
  }
}

export async function runAccountsDisable(context: CommandContext, args: string[]): Promise<void> {
  const request = acceptedOrRefuse(context, "accounts disable", parseAccountsDisable(args));
  const sql = context.openDatabase();
  try {
    context.writeStdout(JSON.stringify(await disableAccount(sql, request.email)));
  } catch (err) {
    if (err instanceof UnknownAccountError) {
      context.writeStderr(err.message);
      context.exit(1);
    }
    throw err;
  } finally {
    await sql.end();
  }
}

export async function runClientsCreate(context: CommandContext, args: string[]): Promise<void> {
  const command = "clients create";
  const { config } = context;
  const resources = new Set(
    tjmResources({
      operations: config.OIDC_OPERATIONS_ADMIN_AUDIENCE,
      tenant: config.OIDC_TENANT_AUDIENCE,
    }).map((resource) => resource.audience),
  );
  const request = acceptedOrRefuse(context, command, parseClientsCreate(args, resources));
  const hmacKey = config.CLIENT_SECRET_HMAC_KEY;
  if (!request.public && hmacKey === undefined) {
    refuse(context, command, [
      "a confidential client needs CLIENT_SECRET_HMAC_KEY (32+ characters, e.g. `openssl rand -hex 32`), the key its secret is stored under",
    ]);
  }
  const sql = context.openDatabase();
  try {
    context.writeStdout(JSON.stringify(await registerClient(sql, request, hmacKey)));
  } catch (err) {
    if (err instanceof UnknownProjectError) refuse(context, command, [err.message]);
    throw err;
  } finally {
    await sql.end();
  }
}
