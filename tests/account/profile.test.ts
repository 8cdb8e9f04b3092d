/**
 * The account portal's snapshot, profile and avatar (issue 23, items 1 and 2) on a real
 * Manager with its provider, a real Admin console in front of it, and OpenStack Swift's s3api as
 * the store: Swift checks presigned signatures, so "S3 refuses another type or length" is the
 * store's answer, not ours. Tokens of every other audience are refused; a second account can
 * neither see nor claim the first one's uploads; every change and refusal writes one audit row.
 */
import { crc32, deflateSync } from "node:zlib";
import { HeadObjectCommand, ListObjectsV2Command, type S3Client } from "@aws-sdk/client-s3";
import { type SwiftServer, startSwift } from "@tjm/devstack/swift";
import { silentLogger } from "@tjm/platform";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sweepAvatarUploads } from "../../manager/src/identity/accounts/index.ts";
import { ADMIN_CONSOLE_AUDIENCE } from "../../manager/src/identity/resources.ts";
import { TestAdmin } from "../admin/admin-harness.ts";
import {
  createTestAccount,
  createTestClient,
  resourceIndicator,
  signInAs,
  type TestAccount,
  type TestClient,
} from "../harness/identity.ts";

const BUCKET = "tjm-avatars";
const PORTAL = resourceIndicator("account-portal");

let swift: SwiftServer;
let s3: S3Client;
let admin: TestAdmin;
let accountA: TestAccount;
let accountB: TestAccount;
let tokenA: string;
let tokenB: string;
/** A token of each other audience, all refused by the account routes. */
let otherTokens: Record<string, string>;
let portalClient: TestClient;

beforeAll(async () => {
  swift = await startSwift();
  s3 = swift.client();
  await swift.createBucket(BUCKET);
  admin = await TestAdmin.start({ manager: { storage: swift.settings } });
  const { sql, issuerUrl } = admin.manager;
  const client = await createTestClient(sql, { resources: ["account-portal", ADMIN_CONSOLE_AUDIENCE] });
  portalClient = client;
  [accountA, accountB] = await Promise.all([createTestAccount(sql), createTestAccount(sql)]);
  const clientAdmin = await createTestAccount(sql, { roles: ["client-admin"] });
  const [a, b, adminConsole, operations, tenant] = await Promise.all([
    signInAs(issuerUrl, client, accountA, PORTAL),
    signInAs(issuerUrl, client, accountB, PORTAL),
    signInAs(issuerUrl, client, clientAdmin, resourceIndicator(ADMIN_CONSOLE_AUDIENCE)),
    admin.manager.operatorToken(),
    admin.manager.tenantToken([]),
  ]);
  tokenA = a.accessToken;
  tokenB = b.accessToken;
  otherTokens = { operations, tenant, "admin-console": adminConsole.accessToken };
}, 120_000);

afterAll(async () => {
  await admin?.close();
  await swift?.stop();
});

function call(token: string | undefined, method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  return fetch(`${admin.manager.baseUrl}/api/v1${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** An avatar is never sniffed into another type, and a browser opening it gets a sandbox. */
const AVATAR_HEADERS = {
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'; sandbox",
};
const securityHeadersOf = (response: Response) => ({
  "x-content-type-options": response.headers.get("x-content-type-options"),
  "content-security-policy": response.headers.get("content-security-policy"),
});

/** The code of a 400's first detail. */
const detailCode = (body: Record<string, unknown>) => (body.details as { code: string }[])[0]?.code;

async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

/** The audit rows of an account, oldest first. */
async function auditOf(account: TestAccount) {
  return admin.manager.sql<{ event: string; result: string; details: Record<string, unknown> }[]>`
    select event, result, details from audit_events where actor_account_id = ${account.accountId} order by id`;
}

/** Runs `act` and answers the audit rows it added. */
async function auditRowsOf(account: TestAccount, act: () => Promise<void>) {
  const before = (await auditOf(account)).length;
  await act();
  return (await auditOf(account)).slice(before);
}

interface Upload {
  avatarUploadId: string;
  url: string;
  headers: Record<string, string>;
}

async function uploadUrl(token: string, contentType: string, contentLength: number): Promise<Upload> {
  const response = await call(token, "POST", "/me/profile/avatar-upload-urls", {
    contentType,
    contentLength,
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as Upload;
}

function put(upload: Upload, body: Uint8Array, contentType = upload.headers["content-type"] as string) {
  return fetch(upload.url, {
    method: "PUT",
    headers: { "content-type": contentType },
    body: body as Uint8Array<ArrayBuffer>,
  });
}

async function staged(upload: Upload, accountId: string): Promise<boolean> {
  const key = `avatar-staging/${accountId}/${upload.avatarUploadId}`;
  return s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })).then(
    () => true,
    (error: { $metadata?: { httpStatusCode?: number } }) => {
      if (error.$metadata?.httpStatusCode === 404) return false;
      throw error;
    },
  );
}

/** A PNG whose header claims `width` × `height` pixels behind a few hundred bytes: a pixel bomb. */
function pngClaiming(width: number, height: number): Uint8Array {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const typed = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typed));
    return Buffer.concat([length, typed, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([1, 0, 0, 0, 0], 8); // 1 bit grey, deflate, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.alloc(1 + Math.ceil(width / 8)))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A photo carrying EXIF with a GPS position (tag 0x8825) and a description to look for. */
async function jpegWithGps(): Promise<Uint8Array> {
  return sharp({ create: { width: 640, height: 480, channels: 3, background: "#3366cc" } })
    .jpeg()
    .withExif({
      IFD0: { ImageDescription: "tjm-gps-marker" },
      IFD3: {
        GPSLatitudeRef: "N",
        GPSLatitude: "35/1 41/1 0/1",
        GPSLongitudeRef: "E",
        GPSLongitude: "51/1 25/1 0/1",
      },
    })
    .toBuffer();
}

const ROUTES = [
  ["GET", "/me", undefined],
  ["PATCH", "/me/profile", { name: "Someone" }],
  ["POST", "/me/profile/avatar-upload-urls", { contentType: "image/png", contentLength: 10 }],
  ["GET", "/me/profile/avatar", undefined],
  ["GET", "/me/accounts/3b241101-e2bb-4255-8caf-4136c566a962/avatar", undefined],
] as const;

describe.each(ROUTES)("%s %s", (method, path, body) => {
  it("answers 401 without a token", async () => {
    const response = await call(undefined, method, path, body);
    expect(response.status).toBe(401);
    expect((await json(response)).code).toBe("auth.token_missing");
  });

  it.each(["operations", "tenant", "admin-console"])(
    "answers 403 to a token of the %s audience",
    async (name) => {
      const response = await call(otherTokens[name], method, path, body);
      expect(response.status).toBe(403);
      expect((await json(response)).code).toMatch(/^auth\./);
    },
  );
});

describe("GET /api/v1/me", () => {
  it("shows the token's account with its identifiers, MFA summary and sessions", async () => {
    const response = await call(tokenA, "GET", "/me");
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const snapshot = await json(response);
    expect(snapshot).toMatchObject({
      id: accountA.accountId,
      email: { address: accountA.email, verified: false },
      phone: null,
      name: "Test account",
      avatarUrl: null,
      dateOfBirth: null,
      gender: null,
      genderDescription: null,
      locale: null,
      roles: [],
      mfa: { enabled: false, factors: [], recoveryCodesRemaining: 0 },
      sessionCount: 1,
    });
    expect(Date.parse(snapshot.createdAt as string)).not.toBeNaN();
    expect((await json(await call(tokenB, "GET", "/me"))).id).toBe(accountB.accountId);
  });
});

describe("PATCH /api/v1/me/profile", () => {
  const long = (n: number) => "x".repeat(n);
  const refusals: [string, Record<string, unknown>, string, string][] = [
    ["an empty name", { name: "   " }, "name", "validation.too_small"],
    ["a name over 100 characters", { name: long(101) }, "name", "validation.too_big"],
    ["a name with a control character", { name: "Ali\u0007" }, "name", "validation.custom"],
    ["a name of invisible characters only", { name: "\u200b\u200c\u3164" }, "name", "name.invisible"],
    ["a name with a right-to-left override", { name: "Ali\u202eevil" }, "name", "name.bidi_override"],
    ["a name with a bidirectional isolate", { name: "\u2067Ali\u2069" }, "name", "name.bidi_override"],
    ["a date of birth in the future", { dateOfBirth: "2999-01-01" }, "dateOfBirth", "validation.too_big"],
    ["a date of birth before 1900", { dateOfBirth: "1899-12-31" }, "dateOfBirth", "validation.too_small"],
    ["a date that does not exist", { dateOfBirth: "2023-02-30" }, "dateOfBirth", "validation.custom"],
    ["a date in another format", { dateOfBirth: "21/03/1990" }, "dateOfBirth", "validation.custom"],
    ["a gender off the list", { gender: "robot" }, "gender", "validation.invalid_value"],
    [
      "a description without self-described",
      { gender: "female", genderDescription: "x" },
      "genderDescription",
      "validation.custom",
    ],
    [
      "self-described without a description",
      { gender: "self-described" },
      "genderDescription",
      "validation.custom",
    ],
    [
      "a description over 50 characters",
      { gender: "self-described", genderDescription: long(51) },
      "genderDescription",
      "validation.too_big",
    ],
    ["a locale not in the catalogue", { locale: "de" }, "locale", "validation.invalid_value"],
  ];

  it.each(refusals)("refuses %s with 400 and one failure audit row", async (_, body, path, code) => {
    const rows = await auditRowsOf(accountA, async () => {
      const response = await call(tokenA, "PATCH", "/me/profile", body);
      expect(response.status).toBe(400);
      const answer = await json(response);
      expect(answer.code).toBe("validation.failed");
      expect(answer.details).toEqual([expect.objectContaining({ path, code })]);
    });
    expect(rows).toEqual([
      expect.objectContaining({
        event: "account.profile-updated",
        result: "failure",
        details: expect.objectContaining({ reason: "validation" }),
      }),
    ]);
  });

  it("stores a change, normalised, strips unknown fields and writes one audit row", async () => {
    const rows = await auditRowsOf(accountB, async () => {
      const response = await call(tokenB, "PATCH", "/me/profile", {
        name: "  Zahra\u0065\u0301 Karimi\u200c  ",
        dateOfBirth: "1990-03-21",
        gender: "self-described",
        genderDescription: " two-spirit ",
        locale: "prs",
        email: "someone-else@example.com",
        roles: ["operator"],
      });
      expect(response.status).toBe(200);
      expect(await json(response)).toMatchObject({
        name: "Zahra\u00e9 Karimi\u200c",
        dateOfBirth: "1990-03-21",
        gender: "self-described",
        genderDescription: "two-spirit",
        locale: "fa-AF",
        email: { address: accountB.email },
        roles: [],
      });
    });
    expect(rows).toEqual([
      expect.objectContaining({
        event: "account.profile-updated",
        result: "success",
        details: expect.objectContaining({
          fields: ["displayName", "dateOfBirth", "gender", "genderDescription", "locale"],
        }),
      }),
    ]);
    // Another answer replaces the person's own words.
    const changed = await json(await call(tokenB, "PATCH", "/me/profile", { gender: "prefer-not-to-say" }));
    expect(changed).toMatchObject({ gender: "prefer-not-to-say", genderDescription: null, locale: "fa-AF" });
    // A's profile is untouched by B's changes.
    expect(await json(await call(tokenA, "GET", "/me"))).toMatchObject({
      name: "Test account",
      locale: null,
    });
  });
});

describe("text that is not text", () => {
  const patch = (token: string, body: string | Uint8Array<ArrayBuffer>) =>
    fetch(`${admin.manager.baseUrl}/api/v1/me/profile`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body,
    });

  it("refuses a lone surrogate in the name at name, and bytes that are not UTF-8 at body, storing nothing", async () => {
    const before = await json(await call(tokenA, "GET", "/me"));
    // JSON.stringify writes a lone surrogate as the escape \ud800, as an attacker would.
    const surrogate = await patch(tokenA, JSON.stringify({ name: "Ali\ud800" }));
    expect(surrogate.status).toBe(400);
    expect((await json(surrogate)).details).toEqual([
      { path: "name", message: expect.any(String), code: "validation.lone_surrogate" },
    ]);
    const bytes = new Uint8Array([...new TextEncoder().encode('{"name":"Ali'), 0xff, 0x22, 0x7d]);
    const notUtf8 = await patch(tokenA, bytes);
    expect(notUtf8.status).toBe(400);
    expect((await json(notUtf8)).details).toEqual([
      { path: "body", message: expect.any(String), code: "validation.invalid_encoding" },
    ]);
    expect(await json(await call(tokenA, "GET", "/me"))).toEqual(before);
  });

  it("keeps ZWNJ and ZWJ inside a name, and a character written as an escaped pair", async () => {
    const response = await patch(tokenB, '{"name":"علی\u200cرضا \u200d\\ud83c\\udfac"}');
    expect(response.status, await response.clone().text()).toBe(200);
    expect((await json(response)).name).toBe("علی\u200cرضا \u200d\u{1f3ac}");
  });
});

describe("a PATCH /api/v1/me/profile naming no field", () => {
  it.each([
    ["an empty body", {}],
    ["only unknown fields", { email: "x@example.com", roles: ["operator"] }],
  ])("with %s changes nothing, answers the snapshot and writes no audit row", async (_, body) => {
    const before = await json(await call(tokenA, "GET", "/me"));
    const rows = await auditRowsOf(accountA, async () => {
      const response = await call(tokenA, "PATCH", "/me/profile", body);
      expect(response.status).toBe(200);
      expect(await json(response)).toEqual(before);
    });
    expect(rows).toEqual([]);
  });
});

/** The keys under `prefix` in the avatar bucket. */
async function keysUnder(prefix: string): Promise<string[]> {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return (listed.Contents ?? []).map((object) => object.Key as string);
}

describe("avatar upload", () => {
  it("refuses another type (415) or over 2 MiB (413), each with a failure audit row", async () => {
    const rows = await auditRowsOf(accountA, async () => {
      const gif = await call(tokenA, "POST", "/me/profile/avatar-upload-urls", {
        contentType: "image/gif",
        contentLength: 10,
      });
      expect([gif.status, (await json(gif)).code]).toEqual([415, "avatar.unsupported_type"]);
      const big = await call(tokenA, "POST", "/me/profile/avatar-upload-urls", {
        contentType: "image/png",
        contentLength: 2 * 1024 * 1024 + 1,
      });
      expect([big.status, (await json(big)).code]).toEqual([413, "avatar.too_large"]);
    });
    expect(rows.map((row) => [row.event, row.result, row.details.reason])).toEqual([
      ["account.avatar-upload-url-created", "failure", "unsupported_type"],
      ["account.avatar-upload-url-created", "failure", "too_large"],
    ]);
  });

  it("signs the type and the length: the store refuses a PUT with either changed", async () => {
    const photo = await jpegWithGps();
    const upload = await uploadUrl(tokenA, "image/jpeg", photo.byteLength);
    expect(new URL(upload.url).searchParams.get("X-Amz-SignedHeaders")).toBe(
      "content-length;content-type;host",
    );
    expect((await put(upload, photo, "image/png")).status).toBe(403);
    expect((await put(upload, photo.subarray(1))).status).toBe(403);
    expect(await staged(upload, accountA.accountId)).toBe(false);
    expect((await put(upload, photo)).status).toBe(200);
  });

  it("makes a photo the avatar without its EXIF and GPS; B can neither claim it nor read it", async () => {
    const photo = await jpegWithGps();
    expect((await sharp(photo).metadata()).exif?.includes(Buffer.from([0x25, 0x88]))).toBe(true);
    const upload = await uploadUrl(tokenA, "image/jpeg", photo.byteLength);
    expect((await put(upload, photo)).status).toBe(200);

    const stolen = await call(tokenB, "PATCH", "/me/profile", { avatarUploadId: upload.avatarUploadId });
    expect([stolen.status, detailCode(await json(stolen))]).toEqual([400, "avatar.upload_unknown"]);
    expect(await staged(upload, accountA.accountId)).toBe(true);

    const rows = await auditRowsOf(accountA, async () => {
      const claimed = await call(tokenA, "PATCH", "/me/profile", { avatarUploadId: upload.avatarUploadId });
      expect(claimed.status).toBe(200);
      expect((await json(claimed)).avatarUrl).toBe(`/api/v1/me/profile/avatar?v=${upload.avatarUploadId}`);
    });
    expect(rows.map((row) => [row.event, row.result])).toEqual([["account.profile-updated", "success"]]);
    expect(await staged(upload, accountA.accountId)).toBe(false);

    const avatar = await call(tokenA, "GET", `/me/profile/avatar?v=${upload.avatarUploadId}`);
    expect([avatar.status, avatar.headers.get("content-type")]).toEqual([200, "image/webp"]);
    expect(securityHeadersOf(avatar)).toEqual(AVATAR_HEADERS);
    const bytes = new Uint8Array(await avatar.arrayBuffer());
    const stored = await sharp(bytes).metadata();
    expect([stored.format, stored.width, stored.height, stored.exif, stored.xmp]).toEqual([
      "webp",
      256,
      256,
      undefined,
      undefined,
    ]);
    expect(Buffer.from(bytes).includes("tjm-gps-marker")).toBe(false);

    const again = await call(tokenA, "PATCH", "/me/profile", { avatarUploadId: upload.avatarUploadId });
    expect([again.status, detailCode(await json(again))]).toEqual([400, "avatar.upload_unknown"]);
    expect((await call(tokenB, "GET", "/me/profile/avatar")).status).toBe(404);
    expect((await json(await call(tokenB, "GET", "/me"))).avatarUrl).toBeNull();
  });

  it("refuses a non-image sent as PNG (415) and a pixel bomb (413), deleting each upload", async () => {
    const cases = [
      [new TextEncoder().encode("#!/bin/sh\necho this is no image\n"), 415, "avatar.unsupported_type"],
      [pngClaiming(20_000, 20_000), 413, "avatar.too_many_pixels"],
    ] as const;
    for (const [file, status, code] of cases) {
      const upload = await uploadUrl(tokenB, "image/png", file.byteLength);
      expect((await put(upload, file)).status).toBe(200);
      const rows = await auditRowsOf(accountB, async () => {
        const refused = await call(tokenB, "PATCH", "/me/profile", {
          avatarUploadId: upload.avatarUploadId,
          name: "Kept out",
        });
        expect([refused.status, (await json(refused)).code]).toEqual([status, code]);
      });
      expect(rows).toEqual([
        expect.objectContaining({ event: "account.profile-updated", result: "failure" }),
      ]);
      expect(await staged(upload, accountB.accountId)).toBe(false);
    }
    // Nothing of a refused request is stored.
    expect((await json(await call(tokenB, "GET", "/me"))).name).not.toBe("Kept out");
  });

  it("lets one of two concurrent claims of an upload through", async () => {
    const png = await sharp({ create: { width: 32, height: 32, channels: 3, background: "#00aa00" } })
      .png()
      .toBuffer();
    const upload = await uploadUrl(tokenB, "image/png", png.byteLength);
    expect((await put(upload, png)).status).toBe(200);
    const claims = await Promise.all(
      [0, 1].map(() => call(tokenB, "PATCH", "/me/profile", { avatarUploadId: upload.avatarUploadId })),
    );
    expect(claims.map((claim) => claim.status).sort()).toEqual([200, 400]);
  });

  it("keeps an upload claimable when nothing was uploaded yet", async () => {
    const upload = await uploadUrl(tokenB, "image/png", 10);
    const early = await call(tokenB, "PATCH", "/me/profile", { avatarUploadId: upload.avatarUploadId });
    expect([early.status, detailCode(await json(early))]).toEqual([400, "avatar.upload_missing"]);
    const [row] = await admin.manager
      .sql`select settled_at from avatar_uploads where id = ${upload.avatarUploadId}`;
    expect(row?.settledAt).toBeNull();
  });

  it("gives at most 10 upload URLs an hour to an account, counted atomically: 429 with Retry-After", async () => {
    const account = await createTestAccount(admin.manager.sql);
    const client = await createTestClient(admin.manager.sql, { resources: ["account-portal"] });
    const { accessToken } = await signInAs(admin.manager.issuerUrl, client, account, PORTAL);
    const answers = await Promise.all(
      Array.from({ length: 12 }, () =>
        call(accessToken, "POST", "/me/profile/avatar-upload-urls", {
          contentType: "image/webp",
          contentLength: 100,
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(10).fill(201), 429, 429]);
    const refused = answers.find((answer) => answer.status === 429) as Response;
    expect((await json(refused)).code).toBe("avatar.upload_rate_limited");
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    const rows = await auditOf(account);
    expect(
      rows
        .filter((row) => row.event === "account.avatar-upload-url-created")
        .map((row) => row.result)
        .sort(),
    ).toEqual([...Array(2).fill("failure"), ...Array(10).fill("success")]);
  });

  it("deletes an upload not claimed within an hour", async () => {
    const upload = await uploadUrl(tokenB, "image/png", 4);
    expect((await put(upload, new Uint8Array([1, 2, 3, 4]))).status).toBe(200);
    await admin.manager.sql`
      update avatar_uploads set created_at = now() - interval '61 minutes' where id = ${upload.avatarUploadId}`;
    const storage = { client: () => s3, bucket: BUCKET };
    expect(await sweepAvatarUploads(admin.manager.sql, storage, silentLogger)).toBeGreaterThanOrEqual(1);
    expect(await staged(upload, accountB.accountId)).toBe(false);
    expect(
      await admin.manager.sql`select 1 from avatar_uploads where id = ${upload.avatarUploadId}`,
    ).toHaveLength(0);
  });
});

describe("deleting the account", () => {
  it("deletes its stored avatar and its staged uploads after the commit, and no other account's", async () => {
    const doomed = await createTestAccount(admin.manager.sql);
    const { accessToken } = await signInAs(admin.manager.issuerUrl, portalClient, doomed, PORTAL);
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: "#00aa00" } })
      .png()
      .toBuffer();
    const claimedUpload = await uploadUrl(accessToken, "image/png", png.byteLength);
    expect((await put(claimedUpload, png)).status).toBe(200);
    const claimed = await call(accessToken, "PATCH", "/me/profile", {
      avatarUploadId: claimedUpload.avatarUploadId,
    });
    expect(claimed.status).toBe(200);
    const unclaimed = await uploadUrl(accessToken, "image/png", png.byteLength);
    expect((await put(unclaimed, png)).status).toBe(200);
    const survivor = await uploadUrl(tokenB, "image/png", png.byteLength);
    expect((await put(survivor, png)).status).toBe(200);
    expect(await keysUnder(`avatars/${doomed.accountId}/`)).toHaveLength(1);
    expect(await keysUnder(`avatar-staging/${doomed.accountId}/`)).toHaveLength(1);

    expect((await call(accessToken, "DELETE", "/me")).status).toBe(204);
    // Deleted after the answer: the answer does not wait on storage.
    await expect.poll(() => keysUnder(`avatars/${doomed.accountId}/`), { timeout: 5000 }).toEqual([]);
    await expect.poll(() => keysUnder(`avatar-staging/${doomed.accountId}/`)).toEqual([]);
    expect(await staged(survivor, accountB.accountId)).toBe(true);
  });
});

describe("the Admin console's /api/me", () => {
  it("forwards the portal with the session's token, takes an avatar file and serves the avatar", async () => {
    const account = await admin.account();
    const { browser } = await admin.signIn(account);
    const snapshot = await admin.request(browser, "/api/me");
    expect(snapshot.status).toBe(200);
    expect(await snapshot.json()).toMatchObject({ id: account.accountId, avatarUrl: null });

    const renamed = await admin.request(browser, "/api/me/profile", {
      method: "PATCH",
      body: { name: "Farid" },
    });
    expect([renamed.status, ((await renamed.json()) as { name: string }).name]).toEqual([200, "Farid"]);
    const invalid = await admin.request(browser, "/api/me/profile", {
      method: "PATCH",
      body: { locale: "xx" },
    });
    expect([invalid.status, ((await invalid.json()) as { code: string }).code]).toEqual([
      400,
      "validation.failed",
    ]);
    // Bytes that are not UTF-8 are refused by the console, never forwarded as U+FFFD.
    const notUtf8 = await browser.fetch(`${admin.baseUrl}/api/me/profile`, {
      method: "PATCH",
      headers: { origin: admin.baseUrl, "content-type": "application/json" },
      body: new Uint8Array([...Buffer.from('{"name":"Far'), 0xff, ...Buffer.from('id 2"}')]),
    });
    expect(notUtf8.status).toBe(400);
    expect(((await notUtf8.json()) as { details: unknown }).details).toEqual([
      { path: "body", message: expect.any(String), code: "validation.invalid_encoding" },
    ]);

    const png = await sharp({ create: { width: 300, height: 200, channels: 4, background: "#ff0000" } })
      .png()
      .toBuffer();
    const posted = await browser.fetch(`${admin.baseUrl}/api/me/profile/avatar`, {
      method: "POST",
      headers: { origin: admin.baseUrl, "content-type": "image/png" },
      body: png,
    });
    expect(posted.status, await posted.clone().text()).toBe(200);
    const avatarUrl = ((await posted.json()) as { avatarUrl: string }).avatarUrl;
    expect(avatarUrl).toMatch(/^\/api\/me\/profile\/avatar\?v=/);
    const avatar = await browser.fetch(`${admin.baseUrl}${avatarUrl}`);
    expect([avatar.status, avatar.headers.get("content-type")]).toEqual([200, "image/webp"]);
    expect(securityHeadersOf(avatar)).toEqual(AVATAR_HEADERS);
    expect((await sharp(new Uint8Array(await avatar.arrayBuffer())).metadata()).width).toBe(256);

    // The account switcher's list carries each account's avatar, on the console's path too.
    const listed = (await (await admin.request(browser, "/api/me/accounts")).json()) as {
      accounts: { id: string; avatarUrl: string | null }[];
    };
    const version = new URL(avatarUrl, admin.baseUrl).searchParams.get("v");
    expect(listed.accounts).toEqual([
      expect.objectContaining({
        id: account.accountId,
        avatarUrl: `/api/me/accounts/${account.accountId}/avatar?v=${version}`,
      }),
    ]);
    const remembered = await browser.fetch(`${admin.baseUrl}${listed.accounts[0]?.avatarUrl}`);
    expect([remembered.status, remembered.headers.get("content-type")]).toEqual([200, "image/webp"]);
    await remembered.body?.cancel();
    // Another account, not remembered in B's browser, cannot read it there.
    const fromB = await call(tokenB, "GET", `/me/accounts/${account.accountId}/avatar`);
    expect([fromB.status, (await json(fromB)).code]).toEqual([404, "avatar.not_found"]);

    const text = await browser.fetch(`${admin.baseUrl}/api/me/profile/avatar`, {
      method: "POST",
      headers: { origin: admin.baseUrl, "content-type": "text/plain" },
      body: "no image",
    });
    expect([text.status, ((await text.json()) as { code: string }).code]).toEqual([
      415,
      "avatar.unsupported_type",
    ]);
    const crossSite = await browser.fetch(`${admin.baseUrl}/api/me/profile/avatar`, {
      method: "POST",
      headers: { origin: "http://evil.example", "content-type": "image/png" },
      body: png,
    });
    expect(crossSite.status).toBe(403);
    // A route the Manager does not have is its 404, forwarded.
    const unknown = await admin.request(browser, "/api/me/no-such-thing");
    expect([unknown.status, ((await unknown.json()) as { code: string }).code]).toEqual([
      404,
      "route.not_found",
    ]);
  });

  it("answers 401 without a console session", async () => {
    const response = await fetch(`${admin.baseUrl}/api/me`);
    expect(response.status).toBe(401);
  });
});
