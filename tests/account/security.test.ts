/**
 * The account portal's identifier and password routes on a real Manager, provider, PostgreSQL,
 * SMTP server and SMS webhook: codes are read from what was delivered, tokens come from real
 * sign-ins. Each route: 401 without a token, 403 with every other audience's, 403 with a real
 * token whose sign-in is older than the window, each validation error; then the flows, a second
 * account, replays, 50 concurrent wrong codes, two accounts racing for one address, the sign-in
 * limit, other sessions ended. No code ever reaches a log line or an audit row.
 */
import { refresh, type SignInResult } from "@tjm/devstack/oidc-client";
import { createLogger } from "@tjm/platform";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACCOUNT_PORTAL_AUDIENCE, ADMIN_CONSOLE_AUDIENCE } from "../../manager/src/identity/resources.ts";
import {
  createTestAccount,
  createTestClient,
  resourceIndicator,
  signInAs,
  type TestAccount,
  type TestClient,
} from "../harness/identity.ts";
import { Mailbox } from "../harness/mailbox.ts";
import { TestManager } from "../harness/manager.ts";
import { SmsWebhook } from "../harness/sms-webhook.ts";

const WEBHOOK_SECRET = "sms-webhook-secret-for-tests-0123456789";
const PORTAL = resourceIndicator(ACCOUNT_PORTAL_AUDIENCE);
const NEW_PASSWORD = "a quiet river of nine lanterns";
const ACCOUNT_LIMIT = 3;

let manager: TestManager;
let mailbox: Mailbox;
let sms: SmsWebhook;
let portal: TestClient;
const logLines: string[] = [];
/** Every code delivered in this file: none may be in a log line or an audit row. */
const codes = new Set<string>();
const otherAudiences: Record<string, string> = {};

beforeAll(async () => {
  [mailbox, sms] = await Promise.all([Mailbox.start(), SmsWebhook.start(WEBHOOK_SECRET)]);
  manager = await TestManager.start({
    logger: createLogger("debug", (line) => logLines.push(line)),
    env: {
      ...mailbox.managerEnv(),
      ...sms.managerEnv(),
      MESSAGE_POLL_MS: "100",
      SIGN_IN_ACCOUNT_FAILURE_LIMIT: String(ACCOUNT_LIMIT),
    },
  });
  portal = await createTestClient(manager.sql, { resources: [ACCOUNT_PORTAL_AUDIENCE] });
  const { projectId } = await manager.createProject();
  const consoleAdmin = await createTestAccount(manager.sql, { roles: ["client-admin"] });
  const consoleClient = await createTestClient(manager.sql, { resources: [ADMIN_CONSOLE_AUDIENCE] });
  Object.assign(otherAudiences, {
    operations: await manager.operatorToken(),
    tenant: await manager.tenantToken([projectId]),
    "admin-console": (
      await signInAs(
        manager.issuerUrl,
        consoleClient,
        consoleAdmin,
        resourceIndicator(ADMIN_CONSOLE_AUDIENCE),
      )
    ).accessToken,
  });
}, 60_000);
afterAll(async () => {
  await manager?.close();
  await Promise.all([mailbox?.stop(), sms?.close()]);
});

interface SignedIn {
  account: TestAccount;
  tokens: SignInResult;
  token: string;
}

async function signedIn(account?: TestAccount, client = portal): Promise<SignedIn> {
  const owner = account ?? (await createTestAccount(manager.sql));
  const tokens = await signInAs(manager.issuerUrl, client, owner, PORTAL);
  return { account: owner, tokens, token: tokens.accessToken };
}

async function call(token: string | undefined, method: string, path: string, json?: unknown, headers = {}) {
  const response = await fetch(`${manager.baseUrl}/api/v1${path}`, {
    method,
    headers: {
      ...headers,
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(json === undefined ? {} : { "content-type": "application/json" }),
    },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  const text = await response.text();
  // biome-ignore lint/suspicious/noExplicitAny: tests read answers as JSON
  const body: any = text === "" ? undefined : JSON.parse(text);
  return { status: response.status, body, headers: response.headers };
}

const patchIdentifiers = (who: SignedIn, json: unknown, headers = {}) =>
  call(who.token, "PATCH", "/me/identifiers", json, headers);
const verify = (who: SignedIn, changeId: string, code: string, headers = {}) =>
  call(who.token, "POST", "/me/identifiers/verifications", { changeId, code }, headers);

/** The code in the `count`-th e-mail to `address`. */
async function mailedCode(address: string, count = 1): Promise<string> {
  const mails = await mailbox.untilReceived(address, count);
  const code = /Your code: (\d{6})/.exec(mails[count - 1]?.parsed.text ?? "")?.[1] as string;
  codes.add(code);
  return code;
}

async function textedCode(phone: string): Promise<string> {
  let code: string | undefined;
  await expect
    .poll(() => (code = /code: (\d{6})/.exec(sms.received.find((m) => m.to === phone)?.text ?? "")?.[1]))
    .toBeDefined();
  codes.add(code as string);
  return code as string;
}

const persianDigits = (code: string) => code.replace(/\d/g, (d) => String.fromCodePoint(0x06f0 + Number(d)));
const newAddress = () => `new-${crypto.randomUUID()}@example.com`;

async function auditRows(accountId: string) {
  return manager.sql<{ event: string; result: string; reason: string | null }[]>`
    select event, result, details ->> 'reason' as reason from audit_events
    where actor_account_id = ${accountId} and event <> 'auth.sign-in' order by id`;
}

const UUID = "3f8e2b1c-7a4d-4c2e-9b6f-1d2e3f4a5b6c";
const ROUTES: [string, string, unknown][] = [
  ["PATCH", "/me/identifiers", { email: "x@example.com" }],
  ["POST", "/me/identifiers/verifications", { changeId: UUID, code: "123456" }],
  ["DELETE", `/me/identifiers/changes/${UUID}`, undefined],
  ["POST", "/me/password", { current_password: "x", new_password: NEW_PASSWORD }],
];

describe.each(ROUTES)("%s %s", (method, path, json) => {
  it("answers 401 without a token and 403 with every other audience's token", async () => {
    expect((await call(undefined, method, path, json)).body.code).toBe("auth.token_missing");
    for (const [audience, token] of Object.entries(otherAudiences)) {
      const { status } = await call(token, method, path, json);
      expect(status, audience).toBe(403);
    }
  });
});

describe("recent authentication", () => {
  it("refuses a real token whose sign-in is older than REAUTHENTICATION_MAX_AGE_SECONDS (403 with max_age)", async () => {
    const first = await signedIn();
    // The provider session's sign-in an hour ago; the next token of that session carries it as auth_time.
    await manager.sql`
      update oidc_records set payload = jsonb_set(payload, '{loginTs}', to_jsonb(extract(epoch from now())::int - 3600))
      where model = 'Session' and account_id = ${first.account.accountId}`;
    const old = await signInAs(
      manager.issuerUrl,
      portal,
      first.account,
      PORTAL,
      undefined,
      first.tokens.session,
    );
    expect(Math.floor(Date.now() / 1000) - (old.claims.auth_time as number)).toBeGreaterThan(3000);
    const who = { ...first, token: old.accessToken };
    for (const [method, path, json] of ROUTES.filter(([, path]) =>
      ["/me/identifiers", "/me/password"].includes(path),
    )) {
      const { status, body, headers } = await call(who.token, method, path, json);
      expect({ status, code: body.code, maxAge: body.maxAge }, path).toEqual({
        status: 403,
        code: "auth.reauthentication_required",
        maxAge: 300,
      });
      expect(headers.get("www-authenticate")).toContain(
        'error="insufficient_user_authentication", max_age=300',
      );
    }
    expect(await auditRows(first.account.accountId)).toEqual(
      expect.arrayContaining([
        {
          event: "account.identifier-change-requested",
          result: "failure",
          reason: "reauthentication required",
        },
        { event: "account.password-changed", result: "failure", reason: "reauthentication required" },
      ]),
    );
  });
});

describe("PATCH /me/identifiers", () => {
  let who: SignedIn;
  let other: SignedIn;
  beforeAll(async () => {
    [who, other] = await Promise.all([signedIn(), signedIn()]);
    await manager.sql`update accounts set email_verified = true where id = ${other.account.accountId}`;
  });

  it.each<[string, unknown, string, string]>([
    ["an empty body", {}, "email", "validation.custom"],
    ["an e-mail that is not a string", { email: 5 }, "email", "validation.invalid_type"],
    ["an e-mail without @", { email: "ada.example.com" }, "email", "identifier.email_invalid"],
    [
      "an e-mail with a control character",
      { email: "a\u0007@example.com" },
      "email",
      "identifier.email_invalid",
    ],
    ["a national phone number", { phone: "0912 345 6789" }, "phone", "identifier.phone_invalid"],
    ["a number no operator has", { phone: "+98 000 000 0000" }, "phone", "identifier.phone_invalid"],
    ["the account's own verified e-mail", "own", "email", "identifier.unchanged"],
  ])("refuses %s (400)", async (_name, json, path, code) => {
    const body = json === "own" ? { email: other.account.email } : json;
    const answer = await patchIdentifiers(json === "own" ? other : who, body);
    expect(answer.status).toBe(400);
    expect(answer.body.details).toEqual([expect.objectContaining({ path, code })]);
  });

  it("refuses another account's address in any spelling (409) and strips unknown fields", async () => {
    const answer = await patchIdentifiers(who, {
      email: ` ${other.account.email.toUpperCase()} `,
      role: "x",
    });
    expect({ status: answer.status, code: answer.body.code }).toEqual({
      status: 409,
      code: "identifier.taken",
    });
  });
});

describe("an e-mail change", () => {
  it("takes effect only with the code sent to the new address, once; the old address is told in the request's language", async () => {
    const who = await signedIn();
    const address = newAddress();
    const requested = await patchIdentifiers(who, { email: address });
    expect(requested.status).toBe(200);
    expect(requested.body).toMatchObject({
      email: who.account.email,
      pendingChanges: [{ channel: "email", identifier: address }],
    });
    const changeId = requested.body.pendingChanges[0].id;
    const code = await mailedCode(address);

    const verified = await verify(who, changeId, persianDigits(code), { "accept-language": "fa" });
    expect(verified.status).toBe(200);
    expect(verified.body).toMatchObject({ email: address, emailVerified: true, pendingChanges: [] });
    const [notice] = await mailbox.untilReceived(who.account.email);
    expect(notice?.parsed.html).toContain('lang="fa"');
    // The code alone, not as part of an id (a message id's hex can hold six digits in a row).
    expect(notice?.parsed.text).not.toMatch(new RegExp(`(?<![0-9a-f-])${code}(?![0-9a-f-])`));

    expect((await verify(who, changeId, code)).body.code).toBe("identifier.change_not_found");
    expect(await auditRows(who.account.accountId)).toEqual([
      { event: "account.identifier-change-requested", result: "success", reason: null },
      { event: "account.identifier-changed", result: "success", reason: null },
      { event: "account.identifier-changed", result: "failure", reason: "not-found" },
    ]);
  });

  it("verifies the account's own unverified address with a code to it, telling nobody of a change", async () => {
    const who = await signedIn();
    const change = (await patchIdentifiers(who, { email: who.account.email })).body.pendingChanges[0];
    const verified = await verify(who, change.id, await mailedCode(who.account.email));
    expect(verified.body).toMatchObject({ email: who.account.email, emailVerified: true });
    const [row] =
      await manager.sql`select count(*)::int as n from message_outbox where recipient = ${who.account.email}`;
    expect(row?.n).toBe(1);
  });

  it("a new request voids the previous code; a cancelled change is gone; another account can neither verify nor cancel", async () => {
    const [who, intruder] = await Promise.all([signedIn(), signedIn()]);
    const first = (await patchIdentifiers(who, { email: newAddress() })).body.pendingChanges[0];
    const firstCode = await mailedCode(first.identifier);
    const second = (await patchIdentifiers(who, { email: newAddress() })).body.pendingChanges[0];
    expect((await verify(who, first.id, firstCode)).body.code).toBe("identifier.change_not_found");

    const secondCode = await mailedCode(second.identifier);
    expect((await verify(intruder, second.id, secondCode)).body.code).toBe("identifier.change_not_found");
    expect((await call(intruder.token, "DELETE", `/me/identifiers/changes/${second.id}`)).status).toBe(404);
    expect((await call(who.token, "DELETE", `/me/identifiers/changes/${second.id}`)).status).toBe(204);
    expect((await verify(who, second.id, secondCode)).body.code).toBe("identifier.change_not_found");
  });

  it("evaluates at most 5 of 50 concurrent wrong codes; the right code is then refused too", async () => {
    const who = await signedIn();
    const change = (await patchIdentifiers(who, { email: newAddress() })).body.pendingChanges[0];
    const code = await mailedCode(change.identifier);
    const wrong = code === "000000" ? "111111" : "000000";
    const answers = await Promise.all(Array.from({ length: 50 }, () => verify(who, change.id, wrong)));
    const byCode = (wanted: string) =>
      answers.filter((a) => (a.body.details?.[0]?.code ?? a.body.code) === wanted).length;
    expect({ wrong: byCode("identifier.code_invalid"), spent: byCode("identifier.change_expired") }).toEqual({
      wrong: 5,
      spent: 45,
    });
    expect((await verify(who, change.id, code)).body.code).toBe("identifier.change_expired");
    const [row] = await manager.sql`select attempts from identifier_changes where id = ${change.id}`;
    expect(row?.attempts).toBe(5);
  });

  it("two accounts racing for one address: exactly one gets it, the other 409", async () => {
    const [a, b] = await Promise.all([signedIn(), signedIn()]);
    const address = newAddress();
    const changeA = (await patchIdentifiers(a, { email: address })).body.pendingChanges[0];
    const codeA = await mailedCode(address, 1);
    const changeB = (await patchIdentifiers(b, { email: address })).body.pendingChanges[0];
    const codeB = await mailedCode(address, 2);
    const answers = await Promise.all([verify(a, changeA.id, codeA), verify(b, changeB.id, codeB)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
    expect(answers.find((answer) => answer.status === 409)?.body.code).toBe("identifier.taken");
    const owners = await manager.sql`select id from accounts where email_key = ${address}`;
    expect(owners).toHaveLength(1);
  });
});

describe("a phone change", () => {
  it("normalises Persian digits to E.164, verifies by SMS, and removing it tells the e-mail address", async () => {
    const who = await signedIn();
    const requested = await patchIdentifiers(who, { phone: "+۹۸ ۹۱۲ ۳۴۵ ۶۷۸۹" });
    expect(requested.body.pendingChanges).toEqual([
      expect.objectContaining({ channel: "phone", identifier: "+989123456789" }),
    ]);
    const code = await textedCode("+989123456789");
    const verified = await verify(who, requested.body.pendingChanges[0].id, code);
    expect(verified.body).toMatchObject({ phone: "+989123456789", phoneVerified: true });
    await mailbox.untilReceived(who.account.email, 1);

    const removed = await patchIdentifiers(who, { phone: null });
    expect(removed.body).toMatchObject({ phone: null, phoneVerified: false });
    const notices = await mailbox.untilReceived(who.account.email, 2);
    expect(notices[1]?.parsed.subject).toMatch(/phone number was removed/);
  });
});

describe("POST /me/password", () => {
  const change = (who: SignedIn, json: unknown) => call(who.token, "POST", "/me/password", json);
  /** One account for the refusals: only the wrong current password spends one of its tries. */
  let refused: SignedIn;
  beforeAll(async () => {
    refused = await signedIn();
  });

  it.each<[string, Record<string, unknown>, string, string[], number]>([
    ["no current password", { current_password: undefined }, "current_password", ["validation.required"], 0],
    ["a short new password", { new_password: "Zq9!x" }, "new_password", ["password.too_short"], 1],
    ["a common new password", { new_password: "leavemealone" }, "new_password", ["password.too_common"], 1],
    [
      "a wrong current password",
      { current_password: "not it at all" },
      "current_password",
      ["password.incorrect"],
      1,
    ],
  ])(
    "refuses %s (400), with an audit row once the domain judged it",
    async (_name, fields, path, detailCodes, auditRowCount) => {
      const who = refused;
      const rowsBefore = (await auditRows(who.account.accountId)).length;
      const answer = await change(who, {
        current_password: who.account.password,
        new_password: NEW_PASSWORD,
        ...fields,
      });
      expect(answer.status).toBe(400);
      expect(answer.body.details.map((d: { path: string; code: string }) => [d.path, d.code])).toEqual(
        detailCodes.map((code) => [path, code]),
      );
      expect(await auditRows(who.account.accountId)).toHaveLength(rowsBefore + auditRowCount);
    },
  );

  it("counts wrong current passwords toward the account's sign-in limit: past it 429 with Retry-After, the right one too", async () => {
    const who = await signedIn();
    for (let attempt = 0; attempt < ACCOUNT_LIMIT; attempt++) {
      expect(
        (await change(who, { current_password: "wrong wrong wrong", new_password: NEW_PASSWORD })).status,
      ).toBe(400);
    }
    const refused = await change(who, { current_password: who.account.password, new_password: NEW_PASSWORD });
    expect({ status: refused.status, code: refused.body.code }).toEqual({
      status: 429,
      code: "account.too_many_attempts",
    });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("changes it, tells the account, keeps this session and ends the others with their refresh tokens and back-channel logout", async () => {
    const app = await createTestClient(manager.sql, { resources: [ACCOUNT_PORTAL_AUDIENCE] });
    await manager.sql`
      update oauth_clients set backchannel_logout_uri = 'http://127.0.0.1:9/logout',
        metadata = metadata || '{"backchannel_logout_session_required": true}'
      where client_id = ${app.clientId}`;
    const who = await signedIn();
    const elsewhere = await signedIn(who.account, app);
    const answer = await change(who, {
      current_password: who.account.password,
      new_password: NEW_PASSWORD,
      revoke_other_sessions: true,
    });
    expect(answer).toMatchObject({ status: 200, body: { otherSessionsEnded: 1 } });

    const [notice] = await mailbox.untilReceived(who.account.email);
    expect(notice?.parsed.subject).toMatch(/password was changed/);
    expect(await auditRows(who.account.accountId)).toEqual([
      { event: "account.password-changed", result: "success", reason: null },
    ]);
    expect((await call(who.token, "DELETE", `/me/identifiers/changes/${UUID}`)).status).toBe(404);
    expect((await call(elsewhere.token, "DELETE", `/me/identifiers/changes/${UUID}`)).body.code).toBe(
      "auth.token_revoked",
    );
    await expect(
      refresh({
        issuer: manager.issuerUrl,
        clientId: app.clientId,
        refreshToken: elsewhere.tokens.refreshToken as string,
      }),
    ).rejects.toThrow(/invalid_grant/);
    const logouts = await manager.sql`
      select from backchannel_logout_outbox where client_id = ${app.clientId} and sid = ${elsewhere.tokens.claims.sid as string}`;
    expect(logouts).toHaveLength(1);
  });
});

describe("secrets", () => {
  it("no code delivered in this file is in a log line or an audit row", async () => {
    expect(codes.size).toBeGreaterThan(5);
    const audit = (
      await manager.sql<{ row: string }[]>`select to_jsonb(a)::text as row from audit_events a`
    ).map((r) => r.row);
    for (const code of codes) {
      const holds = new RegExp(`(?<![0-9])${code}(?![0-9])`);
      expect(logLines.filter((line) => holds.test(line))).toEqual([]);
      expect(audit.filter((row) => holds.test(row))).toEqual([]);
    }
  });
});
