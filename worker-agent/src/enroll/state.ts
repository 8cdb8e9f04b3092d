/**
 * The Worker's identity on disk, in WORKER_STATE_DIR: its NKey seed (made on first start,
 * never sent anywhere; it proves the Worker to the Manager and to NATS) and identity.json
 * ({workerId, managerUrl}). The directory is 0700 and every file 0600, written to a temp
 * file and renamed, so a crash leaves either the old file or the new one, never half of one.
 */
import { lstat, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { createUser, fromSeed, type KeyPair } from "@nats-io/nkeys";
import { UuidSchema } from "@tjm/protocol";
import { z } from "zod";
import { writeFileAtomic } from "../platform/atomic-file.ts";

export const SEED_FILE = "nkey.seed";
export const IDENTITY_FILE = "identity.json";

const IdentitySchema = z.object({ workerId: UuidSchema, managerUrl: z.string().min(1) });
export type StoredIdentity = z.infer<typeof IdentitySchema>;

export interface WorkerState {
  dir: string;
  /** The seed's text ("SU…") as bytes, what nats.js signs the server's nonce with. */
  seed: Uint8Array;
  keyPair: KeyPair;
  /** Undefined until the Worker has registered with this Manager. */
  identity: StoredIdentity | undefined;
  /** The seed was made by this start (first start, or a start after a failed enrollment). */
  seedCreated: boolean;
}

/** The state directory cannot be trusted or used; the message says what to do. */
export class StateError extends Error {
  override name = "StateError";
}

/** No identity is stored and the caller cannot enroll (no token): nothing to start with. */
export class NotEnrolledError extends Error {
  override name = "NotEnrolledError";
}

/** One spelling per Manager, so "http://m:8080" and "http://m:8080/" are the same Manager. */
export function normalizeManagerUrl(url: string): string {
  const parsed = new URL(url);
  parsed.hash = "";
  parsed.search = "";
  return parsed.href.endsWith("/") ? parsed.href : `${parsed.href}/`;
}

/**
 * Reads (and checks) the stored identity. Without one, a seed is generated only when the
 * caller can enroll, so a start that is bound to fail leaves no key behind.
 */
export async function openState(
  dir: string,
  managerUrl: string,
  options: { canEnroll: boolean },
): Promise<WorkerState> {
  await prepareDirectory(dir);
  const seedPath = join(dir, SEED_FILE);
  const identityPath = join(dir, IDENTITY_FILE);
  const storedSeed = await readSecretFile(seedPath);
  const storedIdentity = await readSecretFile(identityPath);

  const identity = storedIdentity === undefined ? undefined : parseIdentity(identityPath, storedIdentity);
  if (identity && normalizeManagerUrl(identity.managerUrl) !== normalizeManagerUrl(managerUrl)) {
    throw new StateError(
      `${identityPath} holds the identity of Worker ${identity.workerId} registered with ${identity.managerUrl}, but MANAGER_URL is ${managerUrl}. Use a separate WORKER_STATE_DIR per Manager, or set MANAGER_URL back.`,
    );
  }
  if (storedSeed === undefined) {
    if (identity) {
      throw new StateError(
        `${identityPath} names Worker ${identity.workerId} but its NKey seed ${seedPath} is missing, so the Worker cannot prove who it is. Restore the seed, or empty ${dir} and enroll again with a new ENROLLMENT_TOKEN.`,
      );
    }
    if (!options.canEnroll) throw new NotEnrolledError(`${dir} holds no Worker identity`);
    const keyPair = createUser();
    const seed = keyPair.getSeed();
    await writeStateFile(seedPath, seed);
    return { dir, seed, keyPair, identity: undefined, seedCreated: true };
  }
  const seed = new TextEncoder().encode(new TextDecoder().decode(storedSeed).trim());
  return { dir, seed, keyPair: userKeyPair(seedPath, seed), identity, seedCreated: false };
}

/** Records the identity the Manager assigned; the next start re-registers with it. */
export async function saveIdentity(dir: string, identity: StoredIdentity): Promise<void> {
  const normalised = { ...identity, managerUrl: normalizeManagerUrl(identity.managerUrl) };
  await writeStateFile(
    join(dir, IDENTITY_FILE),
    new TextEncoder().encode(`${JSON.stringify(normalised, null, 2)}\n`),
  );
}

async function prepareDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new StateError(`cannot create WORKER_STATE_DIR ${dir}: ${(err as Error).message}`, { cause: err });
  }
  const stats = await lstat(dir);
  if (!stats.isDirectory()) throw new StateError(`WORKER_STATE_DIR ${dir} is not a directory`);
  // Others who can write the directory can swap the identity files, whatever their own modes.
  if ((stats.mode & 0o022) !== 0) {
    throw new StateError(
      `WORKER_STATE_DIR ${dir} has mode ${octal(stats.mode)}: it must not be writable by group or others (chmod 700 ${dir})`,
    );
  }
}

/** The file's bytes, or undefined when it does not exist; refuses anything looser than 0600. */
async function readSecretFile(path: string): Promise<Uint8Array | undefined> {
  let stats: Awaited<ReturnType<typeof lstat>>;
  try {
    stats = await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new StateError(`cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
  // A symbolic link would let whoever controls its target choose the Worker's identity.
  if (!stats.isFile()) throw new StateError(`${path} is not a regular file`);
  if ((stats.mode & 0o077) !== 0) {
    throw new StateError(
      `${path} has mode ${octal(stats.mode)}: it holds the Worker's identity and must be readable by its owner only (chmod 600 ${path})`,
    );
  }
  return new Uint8Array(await readFile(path));
}

function parseIdentity(path: string, bytes: Uint8Array): StoredIdentity {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new StateError(`${path} is not valid JSON`);
  }
  const parsed = IdentitySchema.safeParse(json);
  if (!parsed.success) throw new StateError(`${path} is not a Worker identity ({workerId, managerUrl})`);
  return parsed.data;
}

function userKeyPair(path: string, seed: Uint8Array): KeyPair {
  try {
    const keyPair = fromSeed(seed);
    if (keyPair.getPublicKey().startsWith("U")) return keyPair;
  } catch {
    // Reported below without the library's message, which may quote the seed.
  }
  throw new StateError(`${path} does not hold an NKey user seed ("SU…")`);
}

/** Writes a 0600 state file atomically, its directory entry synced too. */
async function writeStateFile(path: string, data: Uint8Array): Promise<void> {
  try {
    await writeFileAtomic(path, data, { mode: 0o600, syncDirectory: true });
  } catch (err) {
    throw new StateError(`cannot write ${path}: ${(err as Error).message}`, { cause: err });
  }
}

const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;
