import { type Algorithm, hash, type Version } from "@node-rs/argon2";
import { describe, expect, it } from "vitest";
import {
  createPasswordHasher,
  hashPassword,
  needsRehash,
  PASSWORD_HASH_PARAMETERS,
  verifyPassword,
  verifyUnknownAccountPassword,
} from "./password-hashing.ts";

const OWASP_MINIMUM = { memoryCost: 19 * 1024, timeCost: 2, parallelism: 1 };

describe("password hashes", () => {
  it("are argon2id PHC strings carrying the parameters, salted anew each time", async () => {
    const first = await hashPassword("correct horse battery staple");
    const second = await hashPassword("correct horse battery staple");
    expect(first).toMatch(/^\$argon2id\$v=19\$m=65536,t=8,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/);
    expect(second).not.toBe(first);
  });

  it("verify the password they were made from and no other", async () => {
    const stored = await hashPassword("correct horse battery staple");
    expect(await verifyPassword(stored, "correct horse battery staple")).toBe(true);
    expect(await verifyPassword(stored, "correct horse battery stapler")).toBe(false);
    expect(await verifyPassword(stored, "Correct horse battery staple")).toBe(false);
  });

  it("are made from the NFKC form, so a decomposed é or full-width letters verify as typed elsewhere", async () => {
    const stored = await hashPassword("caf\u00e9-cr\u00e8me-ABC");
    expect(await verifyPassword(stored, "cafe\u0301-cre\u0300me-ABC")).toBe(true);
    expect(await verifyPassword(stored, "caf\u00e9-cr\u00e8me-ＡＢＣ")).toBe(true);
    expect(await verifyPassword(stored, "cafe-creme-ABC")).toBe(false);
  });
});

describe("parameter changes", () => {
  it("a hash made under older parameters still verifies, and needs a rehash", async () => {
    const older = await createPasswordHasher(OWASP_MINIMUM).hash("correct horse battery staple");
    expect(older).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(await verifyPassword(older, "correct horse battery staple")).toBe(true);
    expect(await verifyPassword(older, "wrong horse battery staple")).toBe(false);
    expect(needsRehash(older)).toBe(true);
  });

  it("a hash made under the current parameters needs none", async () => {
    expect(needsRehash(await hashPassword("correct horse battery staple"))).toBe(false);
  });

  const changed: [string, Partial<typeof PASSWORD_HASH_PARAMETERS>][] = [
    ["memory", { memoryCost: PASSWORD_HASH_PARAMETERS.memoryCost / 2 }],
    ["passes", { timeCost: PASSWORD_HASH_PARAMETERS.timeCost - 1 }],
    ["lanes", { parallelism: 2 }],
  ];
  it.each(changed)("other %s need a rehash", async (_name, change) => {
    const parameters = { ...PASSWORD_HASH_PARAMETERS, ...change };
    const stored = await createPasswordHasher(parameters).hash("correct horse battery staple");
    expect(needsRehash(stored)).toBe(true);
    expect(createPasswordHasher(parameters).needsRehash(stored)).toBe(false);
  });

  it("argon2i, or argon2id of version 16, needs a rehash", async () => {
    const argon2i = await hash("correct horse battery staple", {
      ...PASSWORD_HASH_PARAMETERS,
      algorithm: 1 as Algorithm,
    });
    expect(argon2i).toMatch(/^\$argon2i\$v=19\$m=65536,t=8,p=1\$/);
    expect(needsRehash(argon2i)).toBe(true);
    const version16 = await hash("correct horse battery staple", {
      ...PASSWORD_HASH_PARAMETERS,
      version: 0 as Version,
    });
    expect(version16).toMatch(/^\$argon2id\$v=16\$m=65536,t=8,p=1\$/);
    expect(needsRehash(version16)).toBe(true);
  });
});

describe("a sign-in to an unknown account", () => {
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return (
      ((sorted[Math.floor((sorted.length - 1) / 2)] as number) +
        (sorted[Math.ceil((sorted.length - 1) / 2)] as number)) /
      2
    );
  };
  /**
   * The CPU time the check spends (this test file's own process: vitest runs each file in a fork),
   * not the wall clock: on a 2-core machine running the whole suite, other files' processes take
   * the cores at random and made wall-clock medians differ by half (0.65 and 1.53 were seen).
   * Equal work is what makes the answers equally long for an attacker timing them.
   */
  const timed = async (work: () => Promise<boolean>) => {
    const start = process.cpuUsage();
    expect(await work()).toBe(false);
    const spent = process.cpuUsage(start);
    return spent.user + spent.system;
  };

  it("is refused and takes as long as a wrong password for a known one (median ratio 0.8 to 1.25)", async () => {
    const stored = await hashPassword("the account's real password");
    await verifyUnknownAccountPassword("warm-up: makes the dummy hash");
    const known: number[] = [];
    const unknown: number[] = [];
    // Interleaved, so anything else in this process falls on both alike.
    for (let sample = 0; sample < 12; sample += 1) {
      known.push(await timed(() => verifyPassword(stored, `wrong guess ${sample}`)));
      unknown.push(await timed(() => verifyUnknownAccountPassword(`wrong guess ${sample}`)));
    }
    const ratio = median(unknown) / median(known);
    expect(ratio).toBeGreaterThan(0.8);
    expect(ratio).toBeLessThan(1.25);
  }, 60_000);
});
