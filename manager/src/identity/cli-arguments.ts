/**
 * The identity commands' arguments, checked before anything is read or stored. Pure: every
 * answer is the request or the full list of problems. A problem never repeats an argument that
 * was not recognised, since that argument may be a password typed in the wrong place.
 */
import { ACCOUNT_ROLES, type AccountRole } from "./accounts/store.ts";
import {
  CLIENT_GRANT_TYPES,
  type ClientDefinition,
  type ClientProblem,
  defineClient,
  type RedirectUriRefusal,
  redirectUriRefusal,
} from "./clients/rules.ts";
import { emailKeyProblem, MAX_EMAIL_LENGTH } from "./identifiers.ts";
import type { PasswordProblem } from "./passwords.ts";

type OptionKind = "value" | "values" | "switch";

export type Parsed<T> = { ok: true; value: T } | { ok: false; problems: string[] };

interface Options {
  values: Map<string, string[]>;
  switches: Set<string>;
}

/** `--name value`, `--name=value` and bare switches; anything else is a problem. */
export function parseOptions(args: string[], spec: Record<string, OptionKind>): Parsed<Options> {
  const values = new Map<string, string[]>();
  const switches = new Set<string>();
  const problems: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] as string;
    if (!arg.startsWith("--")) {
      problems.push(`unexpected argument at position ${index + 1} (only --options are accepted)`);
      continue;
    }
    const equals = arg.indexOf("=");
    const name = equals < 0 ? arg.slice(2) : arg.slice(2, equals);
    const kind = Object.hasOwn(spec, name) ? spec[name] : undefined;
    if (kind === undefined) {
      problems.push(`unknown option --${name}`);
      if (equals < 0 && args[index + 1] !== undefined && !args[index + 1]?.startsWith("--")) index += 1;
      continue;
    }
    if (kind === "switch") {
      if (equals >= 0) problems.push(`--${name} takes no value`);
      switches.add(name);
      continue;
    }
    let value: string | undefined;
    if (equals >= 0) value = arg.slice(equals + 1);
    else if (args[index + 1] !== undefined && !args[index + 1]?.startsWith("--")) {
      index += 1;
      value = args[index];
    }
    if (value === undefined || value.trim() === "") {
      problems.push(`--${name} needs a value`);
      continue;
    }
    if (kind === "value" && values.has(name)) problems.push(`--${name} is given more than once`);
    values.set(name, [...(values.get(name) ?? []), value.trim()]);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value: { values, switches } };
}

/**
 * Trimmed, with the domain lowercased (domains are case-insensitive, RFC 5321 §2.4); the local
 * part stays as typed, since only its owner's server may fold it. Uniqueness and lookups ignore
 * case and spelling everywhere all the same: they go by the address's key (identifiers.ts).
 */
export function normalizeEmail(email: string): string | undefined {
  const trimmed = email.trim();
  const at = trimmed.lastIndexOf("@");
  if (at <= 0 || at === trimmed.length - 1 || /\s/.test(trimmed)) return undefined;
  return `${trimmed.slice(0, at)}@${trimmed.slice(at + 1).toLowerCase()}`;
}

/**
 * `--email`: the address as stored, or the problem. A long address is not repeated: it may be
 * megabytes, or a password typed in the wrong place.
 */
function emailArgument(raw: string): { email: string } | { problem: string } {
  const keyProblem = emailKeyProblem(raw);
  if (keyProblem) return { problem: `--email is refused: ${keyProblem.message}` };
  if (raw.trim().length > MAX_EMAIL_LENGTH)
    return { problem: `--email is refused: an e-mail address is at most ${MAX_EMAIL_LENGTH} characters` };
  const email = normalizeEmail(raw);
  return email === undefined ? { problem: `--email '${raw}' is not an e-mail address` } : { email };
}

export interface AccountRequest {
  email: string;
  displayName: string;
  roles: AccountRole[];
}

export function parseAccountsCreate(args: string[]): Parsed<AccountRequest> {
  const options = parseOptions(args, { email: "value", name: "value", role: "values" });
  if (!options.ok) return options;
  const { values } = options.value;
  const problems: string[] = [];
  const rawEmail = values.get("email")?.[0];
  const parsedEmail = rawEmail === undefined ? undefined : emailArgument(rawEmail);
  const email = parsedEmail && "email" in parsedEmail ? parsedEmail.email : undefined;
  if (parsedEmail === undefined) problems.push("--email is required");
  else if ("problem" in parsedEmail) problems.push(parsedEmail.problem);
  const roles: AccountRole[] = [];
  for (const role of values.get("role") ?? []) {
    if (!(ACCOUNT_ROLES as readonly string[]).includes(role))
      problems.push(`--role '${role}' is not one of ${ACCOUNT_ROLES.join(", ")}`);
    else if (!roles.includes(role as AccountRole)) roles.push(role as AccountRole);
  }
  if (problems.length > 0 || email === undefined) return { ok: false, problems };
  return { ok: true, value: { email, displayName: values.get("name")?.[0] ?? "", roles } };
}

/** `accounts disable --email E`: the e-mail address of the account. */
export function parseAccountsDisable(args: string[]): Parsed<{ email: string }> {
  const options = parseOptions(args, { email: "value" });
  if (!options.ok) return options;
  const rawEmail = options.value.values.get("email")?.[0];
  if (rawEmail === undefined) return { ok: false, problems: ["--email is required"] };
  const parsed = emailArgument(rawEmail);
  return "problem" in parsed ? { ok: false, problems: [parsed.problem] } : { ok: true, value: parsed };
}

const REDIRECT_URI_REFUSALS: Record<Exclude<RedirectUriRefusal, "not-canonical">, string> = {
  "not-absolute": "is not an absolute URL",
  malformed: "is not a URL (the WHATWG URL parser refuses it)",
  userinfo: "must not have userinfo (a user name or password before the host)",
  fragment: "has a fragment",
  wildcard: "must not have a * (redirect URIs match exactly, without wildcards)",
  "not-https": "must use https (or http on localhost, 127.0.0.1 or [::1])",
};

function redirectUriText(uri: string, refusal: RedirectUriRefusal): string {
  if (refusal === "not-canonical")
    return `redirect URI '${uri}' is read by URL parsers as '${URL.parse(uri)?.href}': give exactly that`;
  return `redirect URI '${uri}' ${REDIRECT_URI_REFUSALS[refusal]}`;
}

/** Why a redirect URI is refused (identity/clients' rule), in the command line's words. */
export function redirectUriProblem(uri: string): string | undefined {
  const refusal = redirectUriRefusal(uri);
  return refusal && redirectUriText(uri, refusal);
}

/** A client problem in the command line's words: its flags name the fields. */
function clientProblemText(problem: ClientProblem): string {
  switch (problem.code) {
    case "client.redirect_uri_invalid": {
      const text = redirectUriText(problem.uri, problem.refusal);
      if (problem.field === "postLogoutRedirectUris") return `--post-logout-redirect-uri: ${text}`;
      if (problem.field === "backchannelLogoutUri") return `--backchannel-logout-uri: ${text}`;
      return text;
    }
    case "client.grant_type_unknown":
      return `--grant '${problem.grantType}' is not one of ${CLIENT_GRANT_TYPES.join(", ")}`;
    case "client.redirect_uri_required":
      return "the authorization_code grant needs at least one --redirect-uri";
    case "client.redirect_uri_without_code_grant":
      return "--redirect-uri needs the authorization_code grant";
    case "client.logout_uri_without_code_grant":
      return "--post-logout-redirect-uri and --backchannel-logout-uri need the authorization_code grant";
    case "client.refresh_without_code_grant":
      return "the refresh_token grant needs the authorization_code grant";
    case "client.resource_unknown":
      return `--resource '${problem.resource}' is not one of ${problem.known.join(", ")}`;
    case "client.project_id_invalid":
      return `--project '${problem.projectId}' is not a project id (a UUID)`;
    case "client.projects_need_client_credentials":
      return "a client bound to projects (--project) needs the client_credentials grant";
    case "client.public_client_credentials":
      return "a public client (--public) cannot use the client_credentials grant: it has no secret";
    case "client.access_token_ttl_out_of_range":
      return `an access-token lifetime of ${problem.seconds} seconds is outside 30..600`;
  }
}

/**
 * `clients create`: the options as a proposal, judged by the clients' rules (identity/clients).
 * `resources`: every resource a client may be granted (the configured audiences and the fixed ones).
 */
export function parseClientsCreate(args: string[], resources: ReadonlySet<string>): Parsed<ClientDefinition> {
  const options = parseOptions(args, {
    name: "value",
    "redirect-uri": "values",
    "post-logout-redirect-uri": "values",
    "backchannel-logout-uri": "value",
    grant: "values",
    resource: "values",
    project: "values",
    "first-party": "switch",
    public: "switch",
  });
  if (!options.ok) return options;
  const { values, switches } = options.value;
  const name = values.get("name")?.[0];
  const unique = (key: string) => [...new Set(values.get(key) ?? [])];
  const defined = defineClient(
    {
      name: name ?? "",
      redirectUris: unique("redirect-uri"),
      postLogoutRedirectUris: unique("post-logout-redirect-uri"),
      backchannelLogoutUri: values.get("backchannel-logout-uri")?.[0],
      grantTypes: values.has("grant") ? unique("grant") : ["authorization_code"],
      resources: unique("resource"),
      projectIds: unique("project"),
      firstParty: switches.has("first-party"),
      public: switches.has("public"),
    },
    resources,
  );
  const problems = [
    ...(name === undefined ? ["--name is required"] : []),
    ...(defined.ok ? [] : defined.problems.map(clientProblemText)),
  ];
  if (problems.length > 0 || !defined.ok) return { ok: false, problems };
  return { ok: true, value: defined.value };
}

/** A password problem in English, for the command line (the web pages use the locale catalogue). */
export function passwordProblemText(problem: PasswordProblem): string {
  switch (problem.code) {
    case "too-short":
      return `the password must have at least ${problem.params.minimum} characters`;
    case "too-long":
      return `the password must have at most ${problem.params.maximum} characters`;
    case "common":
      return "the password is one of the most common passwords";
    case "contains-email":
      return "the password contains the name of the e-mail address";
  }
}

/**
 * The password from the text read on stdin: one line, its line ending removed (nothing else:
 * spaces belong to the password).
 */
export function passwordFromStdin(text: string): Parsed<string> {
  const line = text.replace(/\r?\n$/, "");
  if (line === "") return { ok: false, problems: ["no password on stdin"] };
  if (/[\r\n]/.test(line)) return { ok: false, problems: ["stdin must hold the password on one line"] };
  return { ok: true, value: line };
}
