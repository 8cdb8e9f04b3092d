import { beforeAll, describe, expect, it } from "vitest";
import { parseCommonPasswords, readCommonPasswords } from "./common-passwords.ts";
import { codePointLength, type PasswordProblemCode, passwordProblems } from "./passwords.ts";

let commonPasswords: ReadonlySet<string>;
beforeAll(async () => {
  commonPasswords = await readCommonPasswords();
});

const codes = (password: string, email?: string) =>
  passwordProblems(password, { email, commonPasswords }).map((problem) => problem.code);

const KEY = "🔑"; // one code point, two UTF-16 units

describe("password length, counted in code points after NFKC", () => {
  const cases: [string, string, PasswordProblemCode[]][] = [
    ["7 ASCII characters", "kx7#qvm", ["too-short"]],
    ["8 ASCII characters", "kx7#qvmz", []],
    ["256 characters", "kx7#qvmz".repeat(32), []],
    ["257 characters", `${"kx7#qvmz".repeat(32)}z`, ["too-long"]],
    ["4 emoji: 8 UTF-16 units but 4 code points", KEY.repeat(4), ["too-short"]],
    ["8 emoji", KEY.repeat(8), []],
    ["256 emoji", KEY.repeat(256), []],
    ["257 emoji", KEY.repeat(257), ["too-long"]],
    ["6 letters + decomposed é: 8 code points typed, 7 once composed", "kx7qvme\u0301", ["too-short"]],
    ["7 letters + decomposed é: 8 once composed", "kx7qvmze\u0301", []],
    ["6 letters + the ligature ﬃ: 7 code points typed, 9 once expanded", "kx7qvm\uFB03", []],
    ["empty", "", ["too-short"]],
  ];
  it.each(cases)("%s", (_name, password, expected) => {
    expect(codes(password)).toEqual(expected);
  });

  it("counts an emoji as one character where UTF-16 counts two", () => {
    expect(KEY.length).toBe(2);
    expect(codePointLength(KEY)).toBe(1);
  });
});

describe("common passwords, compared case-insensitively after NFKC", () => {
  const cases: [string, string, PasswordProblemCode[]][] = [
    ["the most common 8-character one", "password", ["common"]],
    ["in capitals", "PASSWORD", ["common"]],
    ["in mixed case", "PassWord", ["common"]],
    ["in full-width letters", "ＰＡＳＳＷＯＲＤ", ["common"]],
    ["a digit run from the list", "12345678", ["common"]],
    ["common and too short", "qwerty", ["too-short", "common"]],
    ["with l33t substitutions the list holds", "P@ssw0rd", ["common"]],
    ["a list entry inside a longer password", "password-for-tjm", []],
    ["a passphrase", "correct horse battery staple", []],
  ];
  it.each(cases)("%s", (_name, password, expected) => {
    expect(codes(password)).toEqual(expected);
  });
});

describe("the e-mail's local part, case-insensitively, when it has 3 or more characters", () => {
  const cases: [string, string, string, PasswordProblemCode[]][] = [
    ["contains the local part", "alice-2024-spring", "alice@example.com", ["contains-email"]],
    ["contains it in capitals", "ALICE-2024-spring", "alice@example.com", ["contains-email"]],
    ["the address in capitals", "alice-2024-spring", "Alice@Example.com", ["contains-email"]],
    ["contains it in full-width letters", "ａｌｉｃｅ-2024-spring", "alice@example.com", ["contains-email"]],
    ["contains the name before a +tag", "alice-2024-spring", "alice+tjm@example.com", ["contains-email"]],
    ["contains the tagged local part", "xx-alice+tjm-xx", "alice+tjm@example.com", ["contains-email"]],
    ["a 3-character local part", "bob-the-builder", "bob@example.com", ["contains-email"]],
    ["a 2-character local part is not looked for", "major-banjo-kettle", "jo@example.com", []],
    ["a 2-character name before a +tag is not looked for", "major-banjo-kettle", "jo+x@example.com", []],
    ["only the domain", "example-kettle-drum", "alice@example.com", []],
    ["unrelated", "major-banjo-kettle", "alice@example.com", []],
  ];
  it.each(cases)("%s", (_name, password, email, expected) => {
    expect(codes(password, email)).toEqual(expected);
  });

  it("is not checked without an e-mail address", () => {
    expect(codes("alice-2024-spring")).toEqual([]);
  });
});

describe("problems", () => {
  it("carry a stable code, a message key for the locale catalogue and the message's values", () => {
    const problems = passwordProblems(`${"a".repeat(300)}alice`, {
      email: "alice@example.com",
      commonPasswords,
    });
    expect(problems).toEqual([
      { code: "too-long", messageKey: "password.too-long", params: { maximum: 256 } },
      { code: "contains-email", messageKey: "password.contains-email", params: {} },
    ]);
    expect(passwordProblems("abc", { commonPasswords })).toEqual([
      { code: "too-short", messageKey: "password.too-short", params: { minimum: 8 } },
    ]);
    expect(passwordProblems("password", { commonPasswords })).toEqual([
      { code: "common", messageKey: "password.common", params: {} },
    ]);
  });
});

describe("the bundled common-password list", () => {
  it("holds the 49,233 entries of @zxcvbn-ts/language-common 4.1.3, lowercase and NFKC already", () => {
    expect(commonPasswords.size).toBe(49_233);
    for (const entry of commonPasswords) expect(entry).toBe(entry.normalize("NFKC").toLowerCase());
  });

  it("keeps an entry that starts with #, since only the header ends at the first empty line", () => {
    expect(commonPasswords.has("#name?")).toBe(true);
    expect([...parseCommonPasswords("# header\n#\n# more\n\n#one\ntwo\n")]).toEqual(["#one", "two"]);
  });

  it("refuses a file without a header", () => {
    expect(() => parseCommonPasswords("one\ntwo\n")).toThrow(/header/);
  });
});
