/**
 * Password recovery through its three public routes on a real Manager, PostgreSQL, SMTP server
 * and SMS webhook: the happy paths (e-mail in the request's locale, SMS to a verified phone), each
 * validation error, answers that do not tell an existing, unknown, disabled or unverified
 * identifier apart (429s included), concurrent guesses, limits across challenges, a replayed
 * recovery token, and a reset that revokes sessions. Every test speaks from an address of its own
 * (X-Forwarded-For from a trusted proxy), so the per-address limits of one never touch another.
 */
import { refresh, type SignInResult } from "@tjm/devstack/oidc-client";
import { OPERATIONS_AUDIENCE } from "@tjm/devstack/oidc-issuer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

const BASE = "/api/v1/authentication/recovery";
const WEBHOOK_SECRET = "sms-webhook-secret-for-recovery-tests-0123";
const RESOURCE = resourceIndicator(OPERATIONS_AUDIENCE);
const NEW_PASSWORD = "violet tractor umbrella 19";

let manager: TestManager;
let mailbox: Mailbox;
let webhook: SmsWebhook;
let client: TestClient;

beforeAll(async () => {
  mailbox = await Mailbox.start();
  webhook = await SmsWebhook.start(WEBHOOK_SECRET);
  manager = await TestManager.start({
    env: {
      ...mailbox.managerEnv(),
      ...webhook.managerEnv(),
      MESSAGE_POLL_MS: "50",
      TRUSTED_PROXY_ADDRESSES: "127.0.0.1",
      RECOVERY_REQUEST_IDENTIFIER_LIMIT: "8",
      RECOVERY_CODE_IDENTIFIER_LIMIT: "25",
      RECOVERY_DESTINATION_MESSAGE_LIMIT: "10",
    },
  });
  client = await createTestClient(manager.sql, { resources: [OPERATIONS_AUDIENCE] });
}, 60_000);
afterAll(async () => {
  await manager?.close();
  await mailbox?.stop();
  await webhook?.close();
});

let addressCounter = 0;
/** A client address of the test's own: the per-address limits count it alone. */
function newAddress(): string {
  addressCounter++;
  return `10.26.${Math.floor(addressCounter / 250)}.${(addressCounter % 250) + 1}`;
}

function post(step: string, body: unknown, from: string, headers: Record<string, string> = {}) {
  return fetch(`${manager.baseUrl}${BASE}/${step}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": from, ...headers },
    body: JSON.stringify(body),
  });
}

/** Status, body without its request id, and the headers that are not per request. */
async function answer(response: Response) {
  const text = await response.text();
  const body = text === "" ? undefined : JSON.parse(text);
  if (body && typeof body === "object") delete body.requestId;
  const headers = [...response.headers.entries()]
    .filter(([name]) => !["date", "x-request-id"].includes(name))
    .sort(([a], [b]) => a.localeCompare(b));
  return { status: response.status, body, headers };
}

async function operator(): Promise<TestAccount> {
  return createTestAccount(manager.sql, { roles: ["operator"] });
}

/** The code of the newest recovery e-mail to `email` (the code stands alone, left to right). */
async function emailedCode(
  email: string,
  count = 1,
): Promise<{ code: string; html: string; subject: string }> {
  const mails = await mailbox.untilReceived(email, count);
  const mail = mails[count - 1];
  const html = String(mail?.parsed.html);
  const code = /<strong dir="ltr"[^>]*>(\d{6})<\/strong>/.exec(html)?.[1];
  expect(code, html).toBeDefined();
  return { code: code as string, html, subject: String(mail?.parsed.subject) };
}

async function tokenFor(account: TestAccount, from: string, count = 1): Promise<string> {
  expect((await post("code-challenges", { identifier: account.email, channel: "EMAIL" }, from)).status).toBe(
    202,
  );
  const { code } = await emailedCode(account.email, count);
  const verified = await post(
    "code-verifications",
    { identifier: account.email, channel: "EMAIL", code },
    from,
  );
  expect(verified.status).toBe(200);
  return ((await verified.json()) as { recovery_token: string }).recovery_token;
}

async function withPhone(account: TestAccount, verified: boolean): Promise<string> {
  const phone = `+4477009${String(Math.floor(Math.random() * 1e5)).padStart(5, "0")}`;
  await manager.sql`update accounts set phone = ${phone}, phone_verified = ${verified} where id = ${account.accountId}`;
  return phone;
}

async function auditRows(since: number) {
  return manager.sql<
    { event: string; result: string; actorAccountId: string | null; details: Record<string, unknown> }[]
  >`
    select event, result, actor_account_id, details from audit_events
    where id > ${since} and event like 'recovery.%' order by id`;
}

async function lastAuditId(): Promise<number> {
  const [row] = await manager.sql<{ id: number }[]>`select coalesce(max(id), 0)::int as id from audit_events`;
  return (row as { id: number }).id;
}

async function operationsAnswer(tokens: SignInResult): Promise<number> {
  const response = await fetch(`${manager.baseUrl}/api/v1/operations/jobs/${crypto.randomUUID()}`, {
    headers: { authorization: `Bearer ${tokens.accessToken}` },
  });
  await response.body?.cancel();
  return response.status;
}

/**
 * Waits out the current second: a reset that revokes moves tokens_valid_after to now, and a
 * sign-in in that same second is refused (token times are whole seconds, and the same second
 * counts as before the revocation), so a sign-in right after a reset waits for the next one.
 */
async function afterRevocationSecond(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1050 - (Date.now() % 1000)));
}

describe("the happy path", () => {
  it("e-mail: a code in the request's language, a token, a new password; old tokens and sessions end; one audit row per step", async () => {
    const account = await operator();
    const signedIn = await signInAs(manager.issuerUrl, client, account, RESOURCE);
    expect(await operationsAnswer(signedIn)).toBe(404);
    const from = newAddress();
    const since = await lastAuditId();

    // Accept-Language wins over the body's locale.
    const asked = await post(
      "code-challenges",
      { identifier: account.email.toUpperCase(), channel: "EMAIL", locale: "en" },
      from,
      { "accept-language": "ps-AF, en;q=0.5" },
    );
    expect(await answer(asked)).toMatchObject({
      status: 202,
      body: { codeLength: 6, expiresInSeconds: 600 },
    });
    const { code, html, subject } = await emailedCode(account.email);
    expect(html).toContain('<html lang="ps" dir="rtl">');
    expect(subject).not.toMatch(/[A-Za-z]{4}/);

    const persianDigits = code.replace(/\d/g, (digit) => String.fromCodePoint(0x06f0 + Number(digit)));
    const verified = await post(
      "code-verifications",
      { identifier: account.email, channel: "EMAIL", code: persianDigits },
      from,
    );
    expect(verified.status).toBe(200);
    const { recovery_token, expiresInSeconds } = (await verified.json()) as {
      recovery_token: string;
      expiresInSeconds: number;
    };
    expect(expiresInSeconds).toBeLessThanOrEqual(600);
    const [stored] = await manager.sql<{ tokenHash: Buffer; expiresIn: number }[]>`
      select token_hash, extract(epoch from expires_at - created_at)::int as expires_in from recovery_tokens
      where account_id = ${account.accountId}`;
    expect(stored?.tokenHash.toString("base64url")).not.toContain(recovery_token.slice(7));
    expect(stored?.expiresIn).toBeLessThanOrEqual(600);

    const reset = await post(
      "password-resets",
      { recovery_token, new_password: NEW_PASSWORD, revoke_sessions: true },
      from,
      { "accept-language": "fa" },
    );
    expect(reset.status).toBe(204);

    // The access token issued before is refused, its refresh token too, the session is gone.
    expect(await operationsAnswer(signedIn)).toBe(401);
    await expect(
      refresh({
        issuer: manager.issuerUrl,
        clientId: client.clientId,
        refreshToken: signedIn.refreshToken as string,
        resource: RESOURCE,
      }),
    ).rejects.toThrow(/invalid_grant/);
    const [sessions] = await manager.sql<{ count: number }[]>`
      select count(*)::int as count from oidc_records where model = 'Session' and account_id = ${account.accountId}`;
    expect(sessions?.count).toBe(0);
    // The new password signs in; the old one no longer does.
    await afterRevocationSecond();
    const again = await signInAs(manager.issuerUrl, client, { ...account, password: NEW_PASSWORD }, RESOURCE);
    expect(await operationsAnswer(again)).toBe(404);
    await expect(signInAs(manager.issuerUrl, client, account, RESOURCE)).rejects.toThrow();

    // The notice, in the reset request's language.
    const [, notice] = await mailbox.untilReceived(account.email, 2);
    expect(String(notice?.parsed.html)).toContain('<html lang="fa" dir="rtl">');

    // The token is dead: a replay is refused.
    const replay = await post(
      "password-resets",
      { recovery_token, new_password: "another fine passphrase 7", revoke_sessions: false },
      from,
    );
    expect(await answer(replay)).toMatchObject({
      status: 400,
      body: {
        code: "validation.failed",
        details: [{ path: "recovery_token", code: "recovery.token_invalid" }],
      },
    });

    const rows = await auditRows(since);
    expect(rows.map((row) => [row.event, row.result])).toEqual([
      ["recovery.code-requested", "success"],
      ["recovery.code-verified", "success"],
      ["recovery.password-reset", "success"],
      ["recovery.password-reset", "failure"],
    ]);
    expect(rows[2]?.actorAccountId).toBe(account.accountId);
    const written = JSON.stringify(rows);
    expect(written).not.toContain(code);
    expect(written).not.toContain(recovery_token);
    expect(written).not.toContain(recovery_token.slice(7));
  });

  it("a request naming no locale gets the account's own, then English", async () => {
    const chosen = await operator();
    await manager.sql`update accounts set locale = 'ps' where id = ${chosen.accountId}`;
    const unset = await operator();
    for (const account of [chosen, unset]) {
      expect(
        (await post("code-challenges", { identifier: account.email, channel: "EMAIL" }, newAddress())).status,
      ).toBe(202);
    }
    expect((await emailedCode(chosen.email)).html).toContain('<html lang="ps" dir="rtl">');
    expect((await emailedCode(unset.email)).html).toContain('<html lang="en" dir="ltr">');
  });

  it("SMS: a code to the verified phone, typed with spaces, exchanged for a token", async () => {
    const account = await operator();
    const phone = await withPhone(account, true);
    const from = newAddress();
    const spaced = `${phone.slice(0, 3)} ${phone.slice(3, 7)} ${phone.slice(7)}`;
    expect(
      (await post("code-challenges", { identifier: spaced, channel: "SMS", locale: "prs" }, from)).status,
    ).toBe(202);
    const [sms] = await webhook.untilReceived(phone);
    expect(sms?.locale).toBe("fa-AF");
    const code = /(\d{6})/.exec(sms?.text ?? "")?.[1] as string;
    const verified = await post(
      "code-verifications",
      { identifier: phone, channel: "SMS", code: `${code.slice(0, 3)}-${code.slice(3)}` },
      from,
    );
    expect(verified.status).toBe(200);
  });
});

describe("validation", () => {
  const from = newAddress();
  const detailsOf = async (response: Response) => {
    const { status, body } = await answer(response);
    expect(status).toBe(400);
    expect(body.code).toBe("validation.failed");
    return (body.details as { path: string; code: string }[]).map((detail) => [detail.path, detail.code]);
  };

  it.each([
    [{ channel: "EMAIL" }, [["identifier", "validation.required"]]],
    [{ identifier: "a@example.com", channel: "PIGEON" }, [["channel", "validation.invalid_value"]]],
    // zod reports a missing enum as a value outside it.
    [{ identifier: "a@example.com" }, [["channel", "validation.invalid_value"]]],
    [{ identifier: "not an address", channel: "EMAIL" }, [["identifier", "validation.invalid_format"]]],
    [{ identifier: "a@example.com", channel: "SMS" }, [["identifier", "validation.invalid_format"]]],
    [
      { identifier: 42, channel: "EMAIL", locale: 7 },
      [
        ["identifier", "validation.invalid_type"],
        ["locale", "validation.invalid_type"],
      ],
    ],
  ])("code-challenges %j: 400 %j", async (body, expected) => {
    expect(await detailsOf(await post("code-challenges", body, from))).toEqual(expected);
  });

  it.each([
    [{ identifier: "a@example.com", channel: "EMAIL" }, [["code", "validation.required"]]],
    [
      { identifier: "a@example.com", channel: "EMAIL", code: "12ab56" },
      [["code", "validation.invalid_format"]],
    ],
    [
      { identifier: "a@example.com", channel: "FAX", code: "123456" },
      [["channel", "validation.invalid_value"]],
    ],
  ])("code-verifications %j: 400 %j", async (body, expected) => {
    expect(await detailsOf(await post("code-verifications", body, from))).toEqual(expected);
  });

  it.each([
    [{ new_password: NEW_PASSWORD, revoke_sessions: true }, [["recovery_token", "validation.required"]]],
    [{ recovery_token: "x", new_password: NEW_PASSWORD }, [["revoke_sessions", "validation.required"]]],
    [
      { recovery_token: "x", new_password: NEW_PASSWORD, revoke_sessions: "yes" },
      [["revoke_sessions", "validation.invalid_type"]],
    ],
  ])("password-resets %j: 400 %j", async (body, expected) => {
    expect(await detailsOf(await post("password-resets", body, from))).toEqual(expected);
  });

  it.each([
    ["a 7-character password", "xk3!q7z", [["new_password", "password.too_short"]]],
    ["a common password", "password1", [["new_password", "password.too_common"]]],
    ["a good password", NEW_PASSWORD, []],
  ])(
    "password-resets with an unknown token and %s: every failure, each at its field",
    async (_, password, more) => {
      const body = { recovery_token: "tjm_rt_unknown", new_password: password, revoke_sessions: false };
      expect(await detailsOf(await post("password-resets", body, newAddress()))).toEqual([
        ["recovery_token", "recovery.token_invalid"],
        ...more,
      ]);
    },
  );

  it("password-resets: the one policy refuses a short or common password at new_password, and the token stays usable", async () => {
    const account = await operator();
    const address = newAddress();
    const token = await tokenFor(account, address);
    const short = await post(
      "password-resets",
      { recovery_token: token, new_password: "xk3!q", revoke_sessions: false },
      address,
    );
    expect(await detailsOf(short)).toEqual([["new_password", "password.too_short"]]);
    const common = await post(
      "password-resets",
      { recovery_token: token, new_password: "password1", revoke_sessions: false },
      address,
    );
    expect(await detailsOf(common)).toEqual([["new_password", "password.too_common"]]);
    const fine = await post(
      "password-resets",
      { recovery_token: token, new_password: NEW_PASSWORD, revoke_sessions: false, extra: 1 },
      address,
    );
    expect(fine.status).toBe(204);
  });
});

describe("no enumeration", () => {
  /** One identifier of each kind, on the channel each is asked on. */
  async function kinds() {
    const existing = await operator();
    const disabled = await operator();
    await manager.sql`update accounts set disabled_at = now() where id = ${disabled.accountId}`;
    const unverified = await operator();
    const unverifiedPhone = await withPhone(unverified, false);
    return {
      existing: { identifier: existing.email, channel: "EMAIL" },
      unknown: { identifier: `nobody-${crypto.randomUUID()}@example.com`, channel: "EMAIL" },
      disabled: { identifier: disabled.email, channel: "EMAIL" },
      unverified: { identifier: unverifiedPhone, channel: "SMS" },
      existingEmail: existing.email,
    };
  }

  it("every kind gets the same answers at each step, one challenge each, and only the existing account a code", async () => {
    const { existingEmail, ...all } = await kinds();
    const since = await lastAuditId();
    const answers: Record<string, unknown[]> = {};
    for (const [kind, identity] of Object.entries(all)) {
      const from = newAddress();
      answers[kind] = [
        await answer(await post("code-challenges", { ...identity, locale: "fa" }, from)),
        await answer(await post("code-verifications", { ...identity, code: "000000" }, from)),
      ];
    }
    for (const kind of ["unknown", "disabled", "unverified"]) expect(answers[kind]).toEqual(answers.existing);
    // One audit row per step, the failed code included, none naming an account.
    const rows = await auditRows(since);
    expect(rows.map((row) => [row.event, row.result, row.actorAccountId])).toEqual(
      Array.from({ length: 4 }, () => [
        ["recovery.code-requested", "success", null],
        ["recovery.code-verified", "failure", null],
      ]).flat(),
    );
    await mailbox.untilReceived(existingEmail);
    const challenges = await manager.sql<{ identifierKey: string; resolved: boolean; coded: boolean }[]>`
      select identifier_key, resolved_at is not null as resolved, code_hmac is not null as coded
      from recovery_challenges where identifier_key = any(${Object.values(all).map((identity) =>
        identity.channel === "SMS"
          ? `sms:${identity.identifier}`
          : `email:${identity.identifier.toLowerCase()}`,
      )}::text[])`;
    expect(challenges).toHaveLength(4);
    expect(challenges.filter((challenge) => challenge.coded)).toHaveLength(1);
  });

  it("the 429 of a limit reached is the same for an existing and an unknown identifier", async () => {
    const { existing, unknown } = await kinds();
    const last: Record<string, unknown> = {};
    await Promise.all(
      Object.entries({ existing, unknown }).map(async ([kind, identity]) => {
        const from = newAddress();
        for (let request = 0; request < 8; request++) {
          expect((await post("code-challenges", identity, from)).status).toBe(202);
        }
        last[kind] = await answer(await post("code-challenges", identity, from));
      }),
    );
    expect(last.existing).toMatchObject({
      status: 429,
      body: { code: "recovery.rate_limited", statusCode: 429, error: "Too Many Requests" },
    });
    expect((last.existing as { headers: [string, string][] }).headers).toContainEqual([
      "retry-after",
      "3600",
    ]);
    expect(last.unknown).toEqual(last.existing);
  });
});

describe("guessing", () => {
  it("50 concurrent wrong codes: at most 5 are evaluated, and the challenge is then spent", async () => {
    const account = await operator();
    const from = newAddress();
    expect(
      (await post("code-challenges", { identifier: account.email, channel: "EMAIL" }, from)).status,
    ).toBe(202);
    const { code } = await emailedCode(account.email);
    const wrong = code === "111111" ? "222222" : "111111";
    const statuses = await Promise.all(
      Array.from({ length: 50 }, () =>
        post("code-verifications", { identifier: account.email, channel: "EMAIL", code: wrong }, from).then(
          async (response) => (await answer(response)).status,
        ),
      ),
    );
    expect(statuses.every((status) => status === 400 || status === 429)).toBe(true);
    const [challenge] = await manager.sql<{ attempts: number }[]>`
      select attempts from recovery_challenges where identifier_key = ${`email:${account.email.toLowerCase()}`}`;
    expect(challenge?.attempts).toBe(5);
    const right = await post(
      "code-verifications",
      { identifier: account.email, channel: "EMAIL", code },
      from,
    );
    expect((await answer(right)).status).not.toBe(200);
  });

  it("a new challenge voids the previous code", async () => {
    const account = await operator();
    const from = newAddress();
    expect(
      (await post("code-challenges", { identifier: account.email, channel: "EMAIL" }, from)).status,
    ).toBe(202);
    const first = await emailedCode(account.email, 1);
    expect(
      (await post("code-challenges", { identifier: account.email, channel: "EMAIL" }, from)).status,
    ).toBe(202);
    const second = await emailedCode(account.email, 2);
    const old = await post(
      "code-verifications",
      { identifier: account.email, channel: "EMAIL", code: first.code },
      from,
    );
    expect((await answer(old)).body.details[0].code).toBe("recovery.code_invalid");
    const fresh = await post(
      "code-verifications",
      { identifier: account.email, channel: "EMAIL", code: second.code },
      from,
    );
    expect(fresh.status).toBe(200);
  });

  it("limits across challenges: a sixth challenge after five voided ones still counts the wrong codes, for known and unknown identifiers alike", async () => {
    const account = await operator();
    const identities = {
      existing: { identifier: account.email, channel: "EMAIL" },
      unknown: { identifier: `nobody-${crypto.randomUUID()}@example.com`, channel: "EMAIL" },
    };
    const sixth: Record<string, unknown> = {};
    await Promise.all(
      Object.entries(identities).map(async ([kind, identity]) => {
        const from = newAddress();
        for (let challenge = 0; challenge < 5; challenge++) {
          expect((await post("code-challenges", identity, from)).status).toBe(202);
          for (let guess = 0; guess < 5; guess++) {
            const wrong = await post("code-verifications", { ...identity, code: "000000" }, from);
            expect((await answer(wrong)).body.details[0].code).toBe("recovery.code_invalid");
          }
        }
        expect((await post("code-challenges", identity, from)).status).toBe(202);
        const code = kind === "existing" ? (await emailedCode(account.email, 6)).code : "123456";
        // Even the right code of the new challenge: 25 codes were typed for this identifier.
        sixth[kind] = await answer(await post("code-verifications", { ...identity, code }, newAddress()));
      }),
    );
    expect(sixth.existing).toMatchObject({ status: 429, body: { code: "recovery.rate_limited" } });
    expect(sixth.unknown).toEqual(sixth.existing);
  });
});

describe("the recovery token", () => {
  it("is single use: of two concurrent resets with it one succeeds, and a replay is refused", async () => {
    const account = await operator();
    const from = newAddress();
    const token = await tokenFor(account, from);
    const statuses = await Promise.all(
      ["first passphrase of two 1", "second passphrase of two 2"].map(
        async (password) =>
          (
            await post(
              "password-resets",
              { recovery_token: token, new_password: password, revoke_sessions: false },
              from,
            )
          ).status,
      ),
    );
    expect(statuses.sort()).toEqual([204, 400]);
    const replay = await post(
      "password-resets",
      { recovery_token: token, new_password: NEW_PASSWORD, revoke_sessions: false },
      from,
    );
    expect((await answer(replay)).body.details[0].code).toBe("recovery.token_invalid");
  });

  it("resets tried from one address past the limit answer 429 with Retry-After, even with a good token", async () => {
    const account = await operator();
    const from = newAddress();
    const token = await tokenFor(account, newAddress());
    for (let attempt = 0; attempt < 30; attempt++) {
      const guess = await post(
        "password-resets",
        { recovery_token: `tjm_rt_${attempt}`, new_password: NEW_PASSWORD, revoke_sessions: false },
        from,
      );
      expect(guess.status).toBe(400);
    }
    const refused = await post(
      "password-resets",
      { recovery_token: token, new_password: NEW_PASSWORD, revoke_sessions: false },
      from,
    );
    expect(await answer(refused)).toMatchObject({ status: 429, body: { code: "recovery.rate_limited" } });
    expect(refused.headers.get("retry-after")).toBe("3600");
  });

  it("a reset without revoke_sessions leaves the account's sessions and tokens standing", async () => {
    const account = await operator();
    const signedIn = await signInAs(manager.issuerUrl, client, account, RESOURCE);
    const from = newAddress();
    const token = await tokenFor(account, from);
    expect(
      (
        await post(
          "password-resets",
          { recovery_token: token, new_password: NEW_PASSWORD, revoke_sessions: false },
          from,
        )
      ).status,
    ).toBe(204);
    expect(await operationsAnswer(signedIn)).toBe(404);
  });
});
