/**
 * One spelling of an identifier, against the real PostgreSQL (docs/identifiers.md): an account
 * created with one spelling of an e-mail address is found, refused as a duplicate, disabled and
 * counted by the sign-in limit under another spelling exactly when the two have one key.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AccountExistsError,
  createAccount,
  disableAccount,
  findSignInCandidate,
} from "../../manager/src/identity/accounts/index.ts";
import { createSignInLimiter } from "../../manager/src/identity/accounts/sign-in-limits.ts";
import { emailKey, emailKeyProblem, InvalidIdentifierError } from "../../manager/src/identity/identifiers.ts";
import type { Sql } from "../../manager/src/platform/db.ts";
import { createTestSchema, testServices } from "../harness/manager.ts";

let schema: Awaited<ReturnType<typeof createTestSchema>>;
let sql: Sql;

beforeAll(async () => {
  schema = await createTestSchema(testServices().databaseUrl);
  sql = schema.sql;
});
afterAll(() => schema?.drop());

/** Spellings of one piece of an address: each row's are one identifier by design (identifiers.ts). */
const VARIANTS: string[][] = [
  ["i", "I", "ı", "ｉ", "Ｉ"],
  ["i\u0307", "İ", "I\u0307"],
  ["ss", "ß", "ẞ", "SS", "ſs"],
  ["σ", "Σ", "ς"],
  ["fi", "ﬁ", "FI", "Fi"],
  ["k", "K", "\u212a"],
  ["é", "e\u0301", "É", "E\u0301"],
  ["", "\u200b", "\u00ad"],
  ["αι", "ᾳ", "ΑΙ"],
  ["ω", "Ω", "\u2126"],
];

/** Arbitrary text: full Unicode, assigned or not, and graphemes (a letter and its marks). */
const text = (maxLength: number) =>
  fc.oneof(fc.string({ unit: "grapheme", maxLength }), fc.string({ unit: "binary", maxLength }));

/** One piece of two spellings: variants of one row, one arbitrary text in both, or two arbitrary texts. */
const piece: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.constantFrom(...VARIANTS).chain((row) => fc.tuple(fc.constantFrom(...row), fc.constantFrom(...row))),
  text(3).map((same): [string, string] => [same, same]),
  fc.tuple(text(2), text(2)),
);

/** Two spellings of an address no other run uses: a tag of their own, then the pieces. */
function spellings(pieces: [string, string][]): { a: string; b: string } {
  const tag = `${crypto.randomUUID()}-`;
  const [a, b] = [0, 1].map((side) => `${tag}${pieces.map((pair) => pair[side]).join("")}@example.com`);
  return { a: a as string, b: b as string };
}

let nextAddress = 1;

describe("an e-mail address's key and the database", () => {
  it("agree for any two spellings: found, duplicate, disabled and counted under B iff key(A) = key(B)", async () => {
    const limiter = createSignInLimiter(sql, {
      accountLimit: 1000,
      addressLimit: 1_000_000,
      windowSeconds: 900,
    });
    let sameKey = 0;
    let otherKey = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { maxLength: 8 }), async (pieces) => {
        const { a, b } = spellings(pieces);
        fc.pre(emailKeyProblem(a) === undefined);
        const account = { email: a, displayName: "", passwordHash: "not-a-hash", roles: [] };
        const { accountId } = await createAccount(sql, account);
        if (emailKeyProblem(b) !== undefined) {
          await expect(findSignInCandidate(sql, b)).rejects.toThrow(InvalidIdentifierError);
          return;
        }
        const same = emailKey(a) === emailKey(b);
        if (same) sameKey += 1;
        else otherKey += 1;

        expect((await findSignInCandidate(sql, b))?.id === accountId).toBe(same);

        const reserved = await limiter.reserve({
          email: b,
          address: `2001:db8::${(nextAddress++).toString(16)}`,
        });
        expect(reserved.allowed).toBe(true);
        const [counted] = await sql<{ counted: boolean }[]>`
          select exists (select from sign_in_failures f join accounts a on a.email_key = f.key
                         where f.scope = 'account' and a.id = ${accountId}) as counted`;
        expect(counted?.counted).toBe(same);

        if (same) {
          await expect(createAccount(sql, { ...account, email: b })).rejects.toThrow(AccountExistsError);
          expect((await disableAccount(sql, b)).accountId).toBe(accountId);
        } else {
          const other = await createAccount(sql, { ...account, email: b });
          expect((await findSignInCandidate(sql, b))?.id).toBe(other.accountId);
          expect((await findSignInCandidate(sql, a))?.id).toBe(accountId);
        }
      }),
      { numRuns: 200 },
    );
    // The property said something both ways.
    expect(sameKey).toBeGreaterThan(20);
    expect(otherKey).toBeGreaterThan(20);
  });

  it("stores no account without its key, and none under a key another account has", async () => {
    const tag = crypto.randomUUID();
    await createAccount(sql, {
      email: `${tag}-İ@example.com`,
      displayName: "",
      passwordHash: "x",
      roles: [],
    });
    const [row] = await sql<
      { emailKey: string }[]
    >`select email_key from accounts where email = ${`${tag}-İ@example.com`}`;
    expect(row?.emailKey).toBe(`${tag}-i\u0307@example.com`);
    await expect(
      sql`insert into accounts (email, email_key) values (${`${tag}-x@example.com`}, ${row?.emailKey as string})`,
    ).rejects.toThrow(/accounts_email_key/);
  });
});
