import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAccount, createUser } from "@nats-io/nkeys";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  IDENTITY_FILE,
  NotEnrolledError,
  normalizeManagerUrl,
  openState,
  SEED_FILE,
  StateError,
  saveIdentity,
} from "./state.ts";

const managerUrl = "http://manager:8080";
const workerId = "0b6f1c52-5d0a-4c8e-9d7e-2a4f3c1b0e9d";
const mode = async (path: string) => (await stat(path)).mode & 0o777;

describe("the Worker's state directory", () => {
  let root: string;
  let dir: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "tjm-state-"));
    dir = join(root, "state");
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("is created 0700 with a fresh 0600 NKey seed at first start", async () => {
    const state = await openState(dir, managerUrl, { canEnroll: true });
    expect(state).toMatchObject({ dir, identity: undefined, seedCreated: true });
    expect(await mode(dir)).toBe(0o700);
    expect(await mode(join(dir, SEED_FILE))).toBe(0o600);
    const seed = await readFile(join(dir, SEED_FILE), "utf8");
    expect(seed).toMatch(/^SU[A-Z2-7]{56}$/);
    expect(state.keyPair.getPublicKey()).toMatch(/^U/);
    // No temp file is left behind.
    expect(await readdir(dir)).toEqual([SEED_FILE]);
  });

  it("writes no seed when there is no identity and no way to enroll", async () => {
    await expect(openState(dir, managerUrl, { canEnroll: false })).rejects.toBeInstanceOf(NotEnrolledError);
    expect(await readdir(dir)).toEqual([]);
  });

  it("gives back the same key and the saved identity at the next start", async () => {
    const first = await openState(dir, managerUrl, { canEnroll: true });
    await saveIdentity(dir, { workerId, managerUrl });
    expect(await mode(join(dir, IDENTITY_FILE))).toBe(0o600);

    const second = await openState(dir, `${managerUrl}/`, { canEnroll: false });
    expect(second).toMatchObject({
      identity: { workerId, managerUrl: `${managerUrl}/` },
      seedCreated: false,
    });
    expect(second.keyPair.getPublicKey()).toBe(first.keyPair.getPublicKey());
    expect(new TextDecoder().decode(second.seed)).toBe(new TextDecoder().decode(first.seed));
  });

  it("keeps a seed made by a failed enrollment for the next try", async () => {
    const first = await openState(dir, managerUrl, { canEnroll: true });
    const retry = await openState(dir, managerUrl, { canEnroll: true });
    expect(retry.seedCreated).toBe(false);
    expect(retry.keyPair.getPublicKey()).toBe(first.keyPair.getPublicKey());
  });

  it("refuses an identity registered with another Manager", async () => {
    await openState(dir, managerUrl, { canEnroll: true });
    await saveIdentity(dir, { workerId, managerUrl });
    await expect(openState(dir, "https://other:8443", { canEnroll: true })).rejects.toThrow(
      new StateError(
        `${join(dir, IDENTITY_FILE)} holds the identity of Worker ${workerId} registered with http://manager:8080/, but MANAGER_URL is https://other:8443. Use a separate WORKER_STATE_DIR per Manager, or set MANAGER_URL back.`,
      ),
    );
  });

  it.each([SEED_FILE, IDENTITY_FILE])("refuses %s when group or others may read it", async (file) => {
    await openState(dir, managerUrl, { canEnroll: true });
    await saveIdentity(dir, { workerId, managerUrl });
    await chmod(join(dir, file), 0o640);
    await expect(openState(dir, managerUrl, { canEnroll: true })).rejects.toThrow(
      `${join(dir, file)} has mode 0640: it holds the Worker's identity and must be readable by its owner only (chmod 600 ${join(dir, file)})`,
    );
  });

  it("refuses a directory others may write", async () => {
    await mkdir(dir);
    await chmod(dir, 0o777);
    await expect(openState(dir, managerUrl, { canEnroll: true })).rejects.toThrow(
      /has mode 0777: it must not be writable/,
    );
  });

  it("refuses a symbolic link in place of the seed", async () => {
    await mkdir(dir, { mode: 0o700 });
    const elsewhere = join(root, "elsewhere.seed");
    await writeFile(elsewhere, createUser().getSeed(), { mode: 0o600 });
    await symlink(elsewhere, join(dir, SEED_FILE));
    await expect(openState(dir, managerUrl, { canEnroll: true })).rejects.toThrow(/is not a regular file/);
  });

  it("refuses an identity whose seed is missing", async () => {
    await mkdir(dir, { mode: 0o700 });
    await writeFile(join(dir, IDENTITY_FILE), JSON.stringify({ workerId, managerUrl }), { mode: 0o600 });
    await expect(openState(dir, managerUrl, { canEnroll: true })).rejects.toThrow(/NKey seed .* is missing/);
  });

  it("refuses a seed that is not a user seed, without quoting it", async () => {
    await mkdir(dir, { mode: 0o700 });
    const accountSeed = new TextDecoder().decode(createAccount().getSeed());
    await writeFile(join(dir, SEED_FILE), accountSeed, { mode: 0o600 });
    const error = (await openState(dir, managerUrl, { canEnroll: true }).catch(
      (err: unknown) => err,
    )) as Error;
    expect(error).toBeInstanceOf(StateError);
    expect(error.message).toBe(`${join(dir, SEED_FILE)} does not hold an NKey user seed ("SU…")`);
    expect(error.message).not.toContain(accountSeed);
  });

  it("refuses an identity file that is not an identity", async () => {
    await openState(dir, managerUrl, { canEnroll: true });
    await writeFile(join(dir, IDENTITY_FILE), "{not json", { mode: 0o600 });
    await expect(openState(dir, managerUrl, { canEnroll: true })).rejects.toThrow(/is not valid JSON/);
    await writeFile(join(dir, IDENTITY_FILE), JSON.stringify({ workerId: "w1" }), { mode: 0o600 });
    await expect(openState(dir, managerUrl, { canEnroll: true })).rejects.toThrow(/is not a Worker identity/);
  });
});

describe("normalizeManagerUrl", () => {
  it("spells one Manager one way", () => {
    expect(normalizeManagerUrl("http://Manager:8080")).toBe("http://manager:8080/");
    expect(normalizeManagerUrl("http://manager:8080/")).toBe("http://manager:8080/");
    expect(normalizeManagerUrl("https://example.com/tjm")).toBe("https://example.com/tjm/");
    expect(normalizeManagerUrl("https://example.com:443/tjm/")).toBe("https://example.com/tjm/");
  });
});
