/**
 * Every kind of bearer token the API meets, minted once per run, and what each security scheme
 * of the document must do with each kind. A scheme the table does not know fails the fuzzer:
 * which tokens a new scheme accepts is a decision, not something to guess.
 */
import { OPERATIONS_AUDIENCE, TENANT_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import fc from "fast-check";
import { ACCOUNT_PORTAL_AUDIENCE, ADMIN_CONSOLE_AUDIENCE } from "../../manager/src/identity/resources.ts";
import { createTestAccount, createTestClient, resourceIndicator, signInAs } from "../harness/identity.ts";
import type { TestManager } from "../harness/manager.ts";

/** Tokens that prove nothing: every secured route answers them 401. */
const UNAUTHENTICATED = [
  "none",
  "malformed",
  "expired",
  "alg-none",
  "stranger-signed",
  "forged-tjm-issuer",
] as const;

/** Valid tokens, each meant for some audience. */
const AUTHENTICATED = [
  "operator",
  "external-operator",
  "tenant",
  "tenant-of-another-project",
  "external-tenant-audience",
  "account-portal",
  "admin-console",
] as const;

export type TokenKind = (typeof UNAUTHENTICATED)[number] | (typeof AUTHENTICATED)[number];
export type MintedTokens = Record<Exclude<TokenKind, "none" | "malformed">, string>;

/** The kind, and for "malformed" the header sent as it is. */
export type TokenChoice = { kind: Exclude<TokenKind, "malformed"> } | { kind: "malformed"; header: string };

interface SchemeRules {
  /** Kinds the scheme lets through authentication. */
  accepts: readonly TokenKind[];
  /** Whether an accepted token may still get 403 (the route checks more than the audience). */
  mayForbidAccepted: boolean;
}

/** What each security scheme (components.securitySchemes) accepts, from their descriptions. */
export const SCHEME_RULES: Record<string, SchemeRules> = {
  operatorBearer: { accepts: ["operator", "external-operator"], mayForbidAccepted: false },
  // The tjm_projects claim must list the project in the path; otherwise 403.
  tenantBearer: { accepts: ["tenant", "tenant-of-another-project"], mayForbidAccepted: true },
  // Deleting the account needs a recent sign-in (auth.reauthentication_required); otherwise 403.
  accountBearer: { accepts: ["account-portal"], mayForbidAccepted: true },
  // Rotating a secret and deleting a client need a recent sign-in; otherwise 403.
  clientAdminBearer: { accepts: ["admin-console"], mayForbidAccepted: true },
};

const malformedHeader = fc.oneof(
  fc.constantFrom(
    "Bearer",
    "Bearer ",
    "Bearer not-a-jwt",
    "Bearer a.b.c",
    "Bearer eyJhbGciOiJub25lIn0.e30",
    "Basic dXNlcjpwYXNzd29yZA==",
    "Token abc.def.ghi",
    "bearer",
    "",
  ),
  // Printable ASCII only: fetch refuses other header bytes before sending.
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
    maxLength: 64,
  }),
);

const TOKEN_KINDS: readonly Exclude<TokenKind, "malformed">[] = [
  ...UNAUTHENTICATED.filter((kind) => kind !== "malformed"),
  ...AUTHENTICATED,
];

/**
 * Any kind of token, but half the time one the route accepts (none, for a route without
 * security): otherwise most requests would stop at authentication and never reach the handler.
 */
export function tokenChoice(schemes: string[]): fc.Arbitrary<TokenChoice> {
  const accepted =
    schemes.length === 0 ? (["none"] as const) : schemes.flatMap((scheme) => schemeRules(scheme).accepts);
  const kinds = (list: readonly TokenKind[]) =>
    fc.constantFrom(...list.filter((kind) => kind !== "malformed")).map((kind) => ({ kind }) as TokenChoice);
  return fc.oneof(
    { weight: 5, arbitrary: kinds(accepted) },
    { weight: 4, arbitrary: kinds(TOKEN_KINDS) },
    { weight: 1, arbitrary: malformedHeader.map((header): TokenChoice => ({ kind: "malformed", header })) },
  );
}

/** A token of a new account signed in for `audience` (a fresh one after a route ended the last). */
export async function signedInToken(manager: TestManager, audience: string): Promise<string> {
  // The provider gives admin-console tokens only to accounts holding client-admin.
  const account = await createTestAccount(
    manager.sql,
    audience === ADMIN_CONSOLE_AUDIENCE ? { roles: ["client-admin"] } : {},
  );
  const client = await createTestClient(manager.sql, { resources: [audience] });
  return (await signInAs(manager.issuerUrl, client, account, resourceIndicator(audience))).accessToken;
}

/** One token of each kind, from the real provider where TJM issues it, else from the harness's issuer. */
export async function mintTokens(
  manager: TestManager,
  projects: { own: string; other: string },
): Promise<MintedTokens> {
  const external = manager.issuer;
  return {
    operator: await manager.operatorToken(),
    "external-operator": await external.token(),
    tenant: await manager.tenantToken([projects.own]),
    "tenant-of-another-project": await manager.tenantToken([projects.other]),
    "external-tenant-audience": await external.token({ audience: [TENANT_AUDIENCE] }),
    "account-portal": await signedInToken(manager, ACCOUNT_PORTAL_AUDIENCE),
    "admin-console": await signedInToken(manager, ADMIN_CONSOLE_AUDIENCE),
    expired: await external.token({ expiresInSeconds: -600 }),
    "alg-none": external.unsignedToken(),
    "stranger-signed": await external.tokenSignedByStranger(),
    "forged-tjm-issuer": await external.tokenSignedByStranger({
      issuer: manager.issuerUrl,
      audience: [OPERATIONS_AUDIENCE],
    }),
  };
}

export function authorizationHeader(choice: TokenChoice, tokens: MintedTokens): string | undefined {
  if (choice.kind === "none") return undefined;
  if (choice.kind === "malformed") return choice.header;
  return `Bearer ${tokens[choice.kind]}`;
}

export function schemeRules(scheme: string): SchemeRules {
  const rules = SCHEME_RULES[scheme];
  if (!rules) {
    throw new Error(
      `security scheme ${scheme} is not in tests/fuzz/tokens.ts SCHEME_RULES: say which tokens it accepts`,
    );
  }
  return rules;
}

/** Error messages of the bearer check (identity/tokens/verify.ts); a route without security must never answer one. */
const BEARER_REFUSAL = /bearer token|authorization header|^Token (refused|audience)/i;

/**
 * Why the answer breaks the route's documented security, or undefined. `schemes` are the names
 * of the operation's security requirement (empty: a route without security).
 */
export function authProblem(
  schemes: string[],
  choice: TokenChoice,
  response: { status: number; message: string | undefined; wwwAuthenticate: string | null },
): string | undefined {
  const { status } = response;
  if (schemes.length === 0) {
    return (status === 401 || status === 403) && BEARER_REFUSAL.test(response.message ?? "")
      ? `a route without security refused the request for its bearer token (${status})`
      : undefined;
  }
  const rules = schemes.map(schemeRules);
  const accepted = rules.some((rule) => rule.accepts.includes(choice.kind));
  if ((UNAUTHENTICATED as readonly string[]).includes(choice.kind)) {
    // A body over the limit is refused before anything else, the token included.
    if (status === 413) return undefined;
    if (status !== 401) return `a request with a ${choice.kind} token got ${status}, not 401`;
    if (!/^Bearer\b/.test(response.wwwAuthenticate ?? "")) return "a 401 without `www-authenticate: Bearer`";
    return undefined;
  }
  if (!accepted) {
    return status === 401 || status === 403 || status === 413
      ? undefined
      : `a ${choice.kind} token, which this route does not accept, got ${status}`;
  }
  if (status === 401) return `a ${choice.kind} token, which this route accepts, got 401`;
  if (status === 403 && !rules.some((rule) => rule.accepts.includes(choice.kind) && rule.mayForbidAccepted)) {
    return `a ${choice.kind} token, which this route accepts, got 403`;
  }
  return undefined;
}
