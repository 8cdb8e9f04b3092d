/**
 * Multi-factor sign-in on a real Manager, provider, PostgreSQL and SMTP server: the
 * /me/security/mfa routes (each answers 401 without a token and 403 with every other audience's),
 * the provider's second step driven through its pages with TOTP codes computed from the secret
 * the start answered, e-mail codes read from the mailbox, recovery codes, the replay guard, 50
 * concurrent wrong codes, the step-up of operator routes (OPERATOR_REQUIRE_MFA) and the essential
 * acr that makes a password-only session sign in again. No secret reaches a log line or an
 * audit row.
 */
import type { SignInResult } from "@tjm/devstack/oidc-client";
import { OPERATIONS_AUDIENCE, TEST_ENROLLMENT_SECRET } from "@tjm/devstack/oidc-issuer";
import { createLogger } from "@tjm/platform";
import { decodeJwt } from "jose";
import { generate } from "otplib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSignInLimiter } from "../../manager/src/identity/accounts/sign-in-limits.ts";
import { FACTOR_FAILURE_LIMIT, verifySecondFactor } from "../../manager/src/identity/factors/index.ts";
import { factorSecretKey } from "../../manager/src/identity/factors/secrets.ts";
import { oneTimeCodeKey } from "../../manager/src/identity/one-time-codes.ts";
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

const PORTAL = resourceIndicator(ACCOUNT_PORTAL_AUDIENCE);
const SENDS_PER_HOUR = 3;
const ESSENTIAL_MFA = JSON.stringify({
  id_token: { acr: { essential: true, value: "urn:tjm:acr:mfa" } },
});

let manager: TestManager;
let mailbox: Mailbox;
let sms: SmsWebhook;
const WEBHOOK_SECRET = "sms-webhook-secret-for-tests-0123456789";
let portal: TestClient;
const logLines: string[] = [];
/** Every TOTP secret answered in this file: none may be in a log line or an audit row. */
const secrets = new Set<string>();
const otherAudiences: Record<string, string> = {};

beforeAll(async () => {
  [mailbox, sms] = await Promise.all([Mailbox.start(), SmsWebhook.start(WEBHOOK_SECRET)]);
  manager = await TestManager.start({
    logger: createLogger("debug", (line) => logLines.push(line)),
    env: {
      ...mailbox.managerEnv(),
      ...sms.managerEnv(),
      MESSAGE_POLL_MS: "100",
      MFA_OPERATOR_SMS_EMAIL_ALLOWED: "false",
      MFA_CODE_SENDS_PER_HOUR: String(SENDS_PER_HOUR),
      OPERATOR_REQUIRE_MFA: "true",
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

async function call(token: string | undefined, method: string, path: string, json?: unknown) {
  const response = await fetch(`${manager.baseUrl}/api/v1${path}`, {
    method,
    headers: {
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

const persianDigits = (code: string) => code.replace(/\d/g, (d) => String.fromCodePoint(0x06f0 + Number(d)));
const now = () => Math.floor(Date.now() / 1000);
/** The TOTP code of the step `steps` away from now. */
const totp = (secret: string, steps = 0) => generate({ secret, epoch: now() + steps * 30 });

interface Enrolled {
  account: TestAccount;
  token: string;
  secret: string;
  factorId: string;
  recoveryCodes: string[];
  /** The code the enrolment was verified with. */
  enrolmentCode: string;
}

async function portalSignIn(
  account: TestAccount,
  more: Parameters<typeof signInAs>[6] = {},
): Promise<SignInResult> {
  return signInAs(manager.issuerUrl, portal, account, PORTAL, "openid offline_access", undefined, more);
}

/** A TOTP factor enrolled through the routes (the code of the current step), by a new account by default. */
async function enrolTotp(given?: TestAccount): Promise<Enrolled> {
  const account = given ?? (await createTestAccount(manager.sql));
  const { accessToken: token } = await portalSignIn(account);
  const start = await call(token, "POST", "/me/security/mfa/totp");
  expect(start.status).toBe(201);
  secrets.add(start.body.secret);
  const enrolmentCode = await totp(start.body.secret);
  const verified = await call(token, "POST", "/me/security/mfa/totp/verification", {
    enrolmentId: start.body.enrolmentId,
    code: enrolmentCode,
  });
  expect(verified.status).toBe(201);
  return {
    account,
    token,
    secret: start.body.secret,
    factorId: verified.body.factor.id,
    recoveryCodes: verified.body.recoveryCodes,
    enrolmentCode,
  };
}

const ID = "5d1f0c3a-8b7e-4f2d-9a6c-3e4b5a6c7d8e";
const ROUTES: [string, string, unknown][] = [
  ["GET", "/me/security/mfa", undefined],
  ["DELETE", `/me/security/mfa/${ID}`, undefined],
  ["POST", "/me/security/mfa/recovery-codes/regeneration", undefined],
  ["POST", "/me/security/mfa/totp", undefined],
  ["POST", "/me/security/mfa/totp/verification", { enrolmentId: ID, code: "123456" }],
  ["POST", "/me/security/mfa/sms", undefined],
  ["POST", "/me/security/mfa/sms/verification", { enrolmentId: ID, code: "123456" }],
  ["POST", "/me/security/mfa/email", undefined],
  ["POST", "/me/security/mfa/email/verification", { enrolmentId: ID, code: "123456" }],
];

describe.each(ROUTES)("%s %s", (method, path, json) => {
  it("answers 401 without a token and 403 with every other audience's token", async () => {
    expect((await call(undefined, method, path, json)).body.code).toBe("auth.token_missing");
    for (const [audience, token] of Object.entries(otherAudiences)) {
      expect((await call(token, method, path, json)).status, audience).toBe(403);
    }
  });
});

describe("TOTP", () => {
  it("enrols with a first code typed in Persian digits: secret, otpauth URI and QR code once, 10 recovery codes once", async () => {
    const account = await createTestAccount(manager.sql);
    const { accessToken: token } = await portalSignIn(account);
    const start = await call(token, "POST", "/me/security/mfa/totp");
    expect(start.status).toBe(201);
    expect(start.headers.get("cache-control")).toBe("no-store");
    secrets.add(start.body.secret);
    expect(start.body.uri).toMatch(/^otpauth:\/\/totp\/.*secret=[A-Z2-7]{32}.*/);
    // SHA-1, 6 digits and 30 s are the key URI format's defaults: an app reads them when absent.
    expect(start.body.uri).not.toMatch(/algorithm=|digits=|period=/);
    expect(start.body.qrCode).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(Buffer.from(start.body.qrCode.split(",")[1], "base64").toString()).toContain("<svg");

    const verification = (code: unknown, enrolmentId = start.body.enrolmentId) =>
      call(token, "POST", "/me/security/mfa/totp/verification", { enrolmentId, code });
    const missing = await call(token, "POST", "/me/security/mfa/totp/verification", {});
    expect(missing.body.details.map((d: { path: string }) => d.path).sort()).toEqual(["code", "enrolmentId"]);
    expect((await verification("000000")).body.details[0].code).toBe("mfa.code_invalid");
    expect((await verification("123456", ID)).body.code).toBe("mfa.enrolment_not_found");

    const verified = await verification(persianDigits(await totp(start.body.secret)));
    expect(verified.status).toBe(201);
    expect(verified.headers.get("cache-control")).toBe("no-store");
    expect(verified.body.factor).toMatchObject({ type: "totp", maskedDestination: null, lastUsedAt: null });
    const codes: string[] = verified.body.recoveryCodes;
    expect(new Set(codes).size).toBe(10);
    // 24 base32 characters: 120 bits each.
    for (const code of codes) expect(code.replace(/-/g, "")).toMatch(/^[A-Z2-7]{24}$/);
    const stored =
      await manager.sql`select code_hmac from mfa_recovery_codes where account_id = ${account.accountId}`;
    expect(stored.map((row) => row.codeHmac)).not.toEqual(expect.arrayContaining([codes[0]]));

    expect((await call(token, "POST", "/me/security/mfa/totp")).body.code).toBe("mfa.factor_exists");
    const me = await call(token, "GET", "/me");
    expect(me.body.mfa).toMatchObject({ enabled: true, recoveryCodesRemaining: 10 });
    expect(me.body.mfa.factors).toHaveLength(1);
    // Told by e-mail that a factor was added.
    const [mail] = await mailbox.untilReceived(account.email);
    expect(mail?.parsed.subject).toContain("sign-in factor was added");
  });

  it("a second account neither sees nor removes the first one's factor", async () => {
    const first = await enrolTotp();
    const { accessToken: second } = await portalSignIn(await createTestAccount(manager.sql));
    expect((await call(second, "GET", "/me/security/mfa")).body).toEqual({ factors: [] });
    const removal = await call(second, "DELETE", `/me/security/mfa/${first.factorId}`);
    expect({ status: removal.status, code: removal.body.code }).toEqual({
      status: 404,
      code: "mfa.factor_not_found",
    });
    expect((await call(first.token, "GET", "/me/security/mfa")).body.factors).toHaveLength(1);
  });

  it("signs in through the provider's second step: amr otp and mfa, acr mfa; a replayed code and one from two steps ago are refused", async () => {
    const { account, secret } = await enrolTotp();
    // The enrolment used the current step: the next one is the first a sign-in may use.
    const next = await totp(secret, 1);
    const signedIn = await portalSignIn(account, { secondFactor: { method: "totp", code: () => next } });
    expect(signedIn.claims.amr).toEqual(["pwd", "otp", "mfa"]);
    expect(signedIn.claims.acr).toBe("urn:tjm:acr:mfa");
    expect(decodeJwt(signedIn.idToken as string)).toMatchObject({
      amr: ["pwd", "otp", "mfa"],
      acr: "urn:tjm:acr:mfa",
    });

    await expect(
      portalSignIn(account, { secondFactor: { method: "totp", code: () => next } }),
    ).rejects.toThrow(/sign-in refused/);
    const twoStepsAgo = await totp(secret, -2);
    await expect(
      portalSignIn(account, { secondFactor: { method: "totp", code: () => twoStepsAgo } }),
    ).rejects.toThrow(/sign-in refused/);
    const rows = await manager.sql<{ result: string }[]>`
      select result from audit_events where event = 'auth.second-factor' and actor_account_id = ${account.accountId}
      order by id`;
    expect(rows.map((row) => row.result)).toEqual(["success", "failure", "failure"]);
  });

  it("the code just used to enrol, typed at once to sign in, is refused as used: the page says to wait for the next one", async () => {
    const { account, enrolmentCode } = await enrolTotp();
    await expect(
      portalSignIn(account, { secondFactor: { method: "totp", code: () => enrolmentCode } }),
    ).rejects.toThrow(/sign-in refused: This code was already used\. Wait for your app to show the next one/);
    const [row] = await manager.sql<{ details: { reason: string } }[]>`
      select details from audit_events
      where event = 'auth.second-factor' and actor_account_id = ${account.accountId}`;
    expect(row?.details.reason).toBe("code-used");
  });

  it("a password reset through recovery leaves the factor asked at the next sign-in", async () => {
    const { account, secret } = await enrolTotp();
    const recovery = (step: string, body: unknown) =>
      fetch(`${manager.baseUrl}/api/v1/authentication/recovery/${step}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    expect((await recovery("code-challenges", { identifier: account.email, channel: "EMAIL" })).status).toBe(
      202,
    );
    // The factor's notice came first; the recovery code is in the second message.
    const mails = await mailbox.untilReceived(account.email, 2);
    const code = mails
      .map((mail) => /<strong dir="ltr"[^>]*>(\d{6})<\/strong>/.exec(String(mail.parsed.html))?.[1])
      .find((found) => found !== undefined);
    const verified = await recovery("code-verifications", {
      identifier: account.email,
      channel: "EMAIL",
      code,
    });
    expect(verified.status).toBe(200);
    const { recovery_token } = (await verified.json()) as { recovery_token: string };
    const newPassword = "a new password after recovery 77";
    const reset = await recovery("password-resets", {
      recovery_token,
      new_password: newPassword,
      revoke_sessions: true,
    });
    expect(reset.status).toBe(204);

    const recovered = { ...account, password: newPassword };
    await new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));
    await expect(portalSignIn(recovered)).rejects.toThrow(/neither the sign-in form nor a consent/);
    const next = await totp(secret, 1);
    const signedIn = await portalSignIn(recovered, { secondFactor: { method: "totp", code: () => next } });
    expect(signedIn.claims.amr).toEqual(["pwd", "otp", "mfa"]);
  });

  it("50 concurrent wrong codes: at most the factor's limit are compared, the rest refused", async () => {
    const { account, factorId } = await enrolTotp();
    const deps = {
      sql: manager.sql,
      delivery: { channels: new Set<"email" | "sms">(), enqueueMessage: async () => "", wake: () => {} },
      // The test Manager sets neither key: both are derived from ENROLLMENT_TOKEN_SECRET.
      oneTimeCodeKey: oneTimeCodeKey(TEST_ENROLLMENT_SECRET),
      secretKey: factorSecretKey(TEST_ENROLLMENT_SECRET),
      codeSendsPerHour: SENDS_PER_HOUR,
      limiter: createSignInLimiter(manager.sql, {
        accountLimit: 1000,
        addressLimit: 1000,
        windowSeconds: 900,
      }),
      failureWindowSeconds: 900,
    };
    const context = {
      accountId: account.accountId,
      email: account.email,
      address: undefined,
      clientId: undefined,
      locale: "en" as const,
    };
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, () =>
        verifySecondFactor(deps, context, { factorId, code: "000000", offered: true }),
      ),
    );
    const compared = outcomes.filter((outcome) => outcome.outcome === "code-wrong").length;
    expect(compared).toBeLessThanOrEqual(FACTOR_FAILURE_LIMIT);
    expect(outcomes.filter((outcome) => outcome.outcome === "too-many-attempts")).toHaveLength(50 - compared);
  });
});

describe("recovery codes", () => {
  it("sign in once each; a used code is refused; regeneration replaces the set", async () => {
    const { account, token, recoveryCodes } = await enrolTotp();
    const [first, second] = recoveryCodes as [string, string];
    const signedIn = await portalSignIn(account, {
      secondFactor: { method: "recovery", code: () => first.toLowerCase() },
    });
    expect(signedIn.claims.amr).toEqual(["pwd", "otp", "mfa"]);
    await expect(
      portalSignIn(account, { secondFactor: { method: "recovery", code: () => first } }),
    ).rejects.toThrow(/sign-in refused/);
    expect((await call(token, "GET", "/me")).body.mfa.recoveryCodesRemaining).toBe(9);

    const regenerated = await call(token, "POST", "/me/security/mfa/recovery-codes/regeneration");
    expect(regenerated.status).toBe(200);
    expect(regenerated.headers.get("cache-control")).toBe("no-store");
    expect(regenerated.body.recoveryCodes).toHaveLength(10);
    await expect(
      portalSignIn(account, { secondFactor: { method: "recovery", code: () => second } }),
    ).rejects.toThrow(/sign-in refused/);
    const { accessToken: none } = await portalSignIn(await createTestAccount(manager.sql));
    expect((await call(none, "POST", "/me/security/mfa/recovery-codes/regeneration")).body.code).toBe(
      "mfa.not_enabled",
    );
  });
});

describe("e-mail factor", () => {
  it("needs a verified address, enrols with the code mailed, signs in with amr email, and sends at most MFA_CODE_SENDS_PER_HOUR codes an hour", async () => {
    const account = await createTestAccount(manager.sql);
    const { accessToken: token } = await portalSignIn(account);
    expect((await call(token, "POST", "/me/security/mfa/email")).body.code).toBe(
      "mfa.destination_unverified",
    );
    await manager.sql`update accounts set email_verified = true where id = ${account.accountId}`;
    const start = await call(token, "POST", "/me/security/mfa/email");
    expect(start.status).toBe(202);
    expect(start.body.maskedDestination).toMatch(/^a•••@example\.com$/);
    const codeIn = async (count: number) => {
      const mails = await mailbox.untilReceived(account.email, count);
      return /(\d{6})/.exec(mails[count - 1]?.parsed.text ?? "")?.[1] as string;
    };
    const elsewhere = await portalSignIn(account);
    const verified = await call(token, "POST", "/me/security/mfa/email/verification", {
      enrolmentId: start.body.enrolmentId,
      code: persianDigits(await codeIn(1)),
      revoke_other_sessions: true,
    });
    expect(verified.status).toBe(201);
    expect(verified.body.recoveryCodes).toHaveLength(10);
    expect(verified.body.otherSessionsEnded).toBe(1);
    expect((await call(elsewhere.accessToken, "GET", "/me/security/mfa")).status).toBe(401);
    // Mail 2 is the notice; mail 3 the sign-in code, typed in Persian digits.
    const signedIn = await portalSignIn(account, {
      secondFactor: { method: "email", code: async () => persianDigits(await codeIn(3)) },
    });
    expect(signedIn.claims.amr).toEqual(["pwd", "email", "mfa"]);

    expect((await call(token, "POST", "/me/security/mfa/email")).body.code).toBe("mfa.factor_exists");

    // Another account, its own address: three codes in the hour, the fourth refused with Retry-After.
    const other = await createTestAccount(manager.sql);
    await manager.sql`update accounts set email_verified = true where id = ${other.accountId}`;
    const { accessToken: otherToken } = await portalSignIn(other);
    for (let sent = 0; sent < SENDS_PER_HOUR; sent++) {
      expect((await call(otherToken, "POST", "/me/security/mfa/email")).status).toBe(202);
    }
    const refused = await call(otherToken, "POST", "/me/security/mfa/email");
    expect({ status: refused.status, code: refused.body.code }).toEqual({
      status: 429,
      code: "mfa.too_many_codes_sent",
    });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(3500);
  });
});

describe("SMS factor", () => {
  it("enrols the verified phone and signs in with amr sms; refused to operators by MFA_OPERATOR_SMS_EMAIL_ALLOWED=false", async () => {
    const account = await createTestAccount(manager.sql);
    const phone = `+98912${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`;
    await manager.sql`update accounts set phone = ${phone}, phone_verified = true where id = ${account.accountId}`;
    const { accessToken: token } = await portalSignIn(account);
    const start = await call(token, "POST", "/me/security/mfa/sms");
    expect(start.status).toBe(202);
    expect(start.body.maskedDestination).toBe(
      `${phone.slice(0, 3)}${"•".repeat(phone.length - 5)}${phone.slice(-2)}`,
    );
    const texted = async (count: number) =>
      /(\d{6})/.exec((await sms.untilReceived(phone, count))[count - 1]?.text ?? "")?.[1] as string;
    const verified = await call(token, "POST", "/me/security/mfa/sms/verification", {
      enrolmentId: start.body.enrolmentId,
      code: await texted(1),
    });
    expect(verified.body.factor).toMatchObject({ type: "sms" });
    const signedIn = await portalSignIn(account, { secondFactor: { method: "sms", code: () => texted(2) } });
    expect(signedIn.claims.amr).toEqual(["pwd", "sms", "mfa"]);

    const operator = await createTestAccount(manager.sql, { roles: ["operator"] });
    await manager.sql`update accounts set email_verified = true where id = ${operator.accountId}`;
    const { accessToken: operatorToken } = await portalSignIn(operator);
    const refused = await call(operatorToken, "POST", "/me/security/mfa/email");
    expect({ status: refused.status, code: refused.body.code }).toEqual({
      status: 403,
      code: "mfa.factor_refused",
    });
  });
});

describe("DELETE /me/security/mfa/{factor_id}", () => {
  it("removes the factor (the last one takes the recovery codes), tells the account, writes one audit row", async () => {
    const { account, token, factorId } = await enrolTotp();
    const removed = await call(token, "DELETE", `/me/security/mfa/${factorId}`);
    expect(removed).toMatchObject({ status: 200, body: { otherSessionsEnded: 0 } });
    expect((await call(token, "GET", "/me")).body.mfa).toEqual({
      enabled: false,
      factors: [],
      recoveryCodesRemaining: 0,
    });
    expect((await call(token, "DELETE", `/me/security/mfa/${factorId}`)).status).toBe(404);
    const mails = await mailbox.untilReceived(account.email, 2);
    expect(mails[1]?.parsed.subject).toContain("sign-in factor was removed");
    const rows = await manager.sql<{ event: string; result: string }[]>`
      select event, result from audit_events
      where actor_account_id = ${account.accountId} and event like 'mfa.%' order by id`;
    expect(rows).toEqual([
      { event: "mfa.enrolment-started", result: "success" },
      { event: "mfa.factor-added", result: "success" },
      { event: "mfa.factor-removed", result: "success" },
      { event: "mfa.factor-removed", result: "failure" },
    ]);
    // Signs in with the password alone again.
    expect((await portalSignIn(account)).claims.amr).toEqual(["pwd"]);
  });
});

describe("step-up (OPERATOR_REQUIRE_MFA)", () => {
  it("refuses an operator token without a second factor; an essential acr makes the session sign in again with it", async () => {
    const operations = await createTestClient(manager.sql, { resources: [OPERATIONS_AUDIENCE] });
    const indicator = resourceIndicator(OPERATIONS_AUDIENCE);
    const account = await createTestAccount(manager.sql, { roles: ["operator"] });
    const jobs = (token: string) =>
      manager.request("/api/v1/operations/jobs", { headers: { authorization: `Bearer ${token}` } });
    const passwordOnly = await signInAs(manager.issuerUrl, operations, account, indicator, "openid");
    const refused = await jobs(passwordOnly.accessToken);
    expect(refused.status).toBe(403);
    expect((await refused.json()).code).toBe("auth.mfa_required");

    // The account enrols TOTP (in the portal, another browser). In the operator's browser the
    // session is reused as it is (amr pwd) until the client asks for the acr as essential.
    const { secret } = await enrolTotp(account);
    const session = passwordOnly.session;
    const reused = await signInAs(manager.issuerUrl, operations, account, indicator, "openid", session);
    expect(reused.claims.amr).toEqual(["pwd"]);
    const stepUp = await signInAs(manager.issuerUrl, operations, account, indicator, "openid", session, {
      claims: ESSENTIAL_MFA,
      secondFactor: { method: "totp", code: () => totp(secret, 1) },
    });
    expect(stepUp.claims).toMatchObject({ amr: ["pwd", "otp", "mfa"], acr: "urn:tjm:acr:mfa" });
    const allowed = await jobs(stepUp.accessToken);
    expect(allowed.status).toBe(200);
    await allowed.body?.cancel();
  });
});

describe("secrets", () => {
  it("no TOTP secret is in a log line or an audit row", async () => {
    expect(secrets.size).toBeGreaterThan(3);
    const audit = JSON.stringify(await manager.sql`select details from audit_events`);
    for (const secret of secrets) {
      expect(logLines.filter((line) => line.includes(secret))).toEqual([]);
      expect(audit.includes(secret)).toBe(false);
    }
    const stored = await manager.sql<
      { secretCiphertext: Buffer }[]
    >`select secret_ciphertext from mfa_factors where type = 'totp'`;
    for (const row of stored)
      for (const secret of secrets) expect(row.secretCiphertext.includes(secret)).toBe(false);
  });
});
