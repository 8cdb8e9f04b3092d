/**
 * The NATS operator-mode trust of a compose deployment (deploy/nats/init.ts runs it): an
 * operator, the system account, the TJM account with a signing key, and the Manager's user.
 * Keys and JWTs are made as devstack/src/nats-operator.ts makes them for the tests, but the
 * seeds are kept (0600, in a volume only the init service mounts) so that every later start
 * renders the same trust again: the servers' resolver, the Manager's .creds and the account
 * settings the Manager signs Worker user JWTs with. Nothing here is ever committed.
 *
 * Run by Node directly (type stripping), so erasable TypeScript only.
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { encodeAccount, encodeOperator, encodeUser, fmtCreds } from "@nats-io/jwt";
import { createAccount, createOperator, createUser, fromSeed, type KeyPair } from "@nats-io/nkeys";

/** Where each rendered file goes, one directory (volume) per reader. */
export interface TrustDirectories {
  /** The seeds; only the init service mounts it. */
  keys: string;
  /** SERVER_TRUST_FILE, included by every nats-server's configuration; holds no secret. */
  server: string;
  /** MANAGER_CREDS_FILE and MANAGER_ENV_FILE, mounted read-only by the Managers. */
  manager: string;
}

export const SERVER_TRUST_FILE = "trust.conf";
export const MANAGER_CREDS_FILE = "manager.creds";
export const MANAGER_ENV_FILE = "account.env";
/** The Manager settings (manager/src/config.ts) MANAGER_ENV_FILE holds, in that order. */
export const MANAGER_ENV_NAMES = ["NATS_ACCOUNT_PUBLIC_KEY", "NATS_ACCOUNT_SIGNING_KEY_SEED"] as const;

const KEYS = {
  operator: createOperator,
  system: createAccount,
  account: createAccount,
  signing: createAccount,
  manager: createUser,
} as const;
type KeyName = keyof typeof KEYS;
export type TrustKeys = Record<KeyName, KeyPair>;

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** Written to a temp file and renamed: a crash never leaves half a file where a reader looks. */
async function writeAtomically(path: string, text: string, mode: number): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, text, { mode });
  await rename(temporary, path);
}

function isMissing(err: unknown): boolean {
  return err instanceof Error && (err as NodeJS.ErrnoException).code === "ENOENT";
}

/** Each seed from `<name>.nk`, made (and kept) when missing; returns which were made now. */
export async function loadOrCreateKeys(directory: string): Promise<{ keys: TrustKeys; created: KeyName[] }> {
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const keys: Partial<TrustKeys> = {};
  const created: KeyName[] = [];
  for (const name of Object.keys(KEYS) as KeyName[]) {
    const path = join(directory, `${name}.nk`);
    try {
      keys[name] = fromSeed(encoder.encode((await readFile(path, "utf8")).trim()));
    } catch (err) {
      if (!isMissing(err)) throw err;
      const pair = KEYS[name]();
      await writeAtomically(path, `${decoder.decode(pair.getSeed())}\n`, 0o600);
      keys[name] = pair;
      created.push(name);
    }
  }
  return { keys: keys as TrustKeys, created };
}

export interface RenderedTrust {
  serverConfig: string;
  managerCreds: string;
  managerEnv: string;
  accountPublicKey: string;
}

/** The files each reader needs, from the keys. JWTs are signed afresh; the keys decide the trust. */
export async function renderTrust(keys: TrustKeys): Promise<RenderedTrust> {
  const systemPublicKey = keys.system.getPublicKey();
  const accountPublicKey = keys.account.getPublicKey();
  const operatorJwt = await encodeOperator("TJM", keys.operator, { system_account: systemPublicKey });
  const systemJwt = await encodeAccount("SYS", keys.system, {}, { signer: keys.operator });
  const accountJwt = await encodeAccount(
    "TJM",
    keys.account,
    {
      // A limit missing from the JWT reads as 0, not unlimited: the server would refuse every
      // connection and keep JetStream off for the account (devstack/src/nats-operator.ts).
      limits: {
        conn: -1,
        subs: -1,
        data: -1,
        payload: -1,
        imports: -1,
        exports: -1,
        leaf: -1,
        wildcards: true,
        mem_storage: -1,
        disk_storage: -1,
        streams: -1,
        consumer: -1,
      },
      signing_keys: [keys.signing.getPublicKey()],
    },
    { signer: keys.operator },
  );
  // Signed by the signing key, as the Manager signs Workers' users: the identity key stays unused.
  const managerJwt = await encodeUser(
    "manager",
    keys.manager,
    accountPublicKey,
    {},
    { signer: keys.signing },
  );
  // JSON string literals are valid quoted strings in the NATS configuration syntax.
  const q = JSON.stringify;
  const serverConfig = [
    "# Written by deploy/nats/init.ts at every start of the nats-init service; do not edit.",
    `operator: ${q(operatorJwt)}`,
    `system_account: ${q(systemPublicKey)}`,
    "resolver: MEMORY",
    "resolver_preload: {",
    `  ${accountPublicKey}: ${q(accountJwt)}`,
    `  ${systemPublicKey}: ${q(systemJwt)}`,
    "}",
    "",
  ].join("\n");
  const seed = decoder.decode(keys.signing.getSeed());
  const values: Record<(typeof MANAGER_ENV_NAMES)[number], string> = {
    NATS_ACCOUNT_PUBLIC_KEY: accountPublicKey,
    NATS_ACCOUNT_SIGNING_KEY_SEED: seed,
  };
  const managerEnv = `${MANAGER_ENV_NAMES.map((name) => `${name}=${values[name]}`).join("\n")}\n`;
  return {
    serverConfig,
    managerCreds: decoder.decode(fmtCreds(managerJwt, keys.manager)),
    managerEnv,
    accountPublicKey,
  };
}

/** Makes the keys at first start, then (every start) writes what the servers and Managers read. */
export async function initTrust(
  directories: TrustDirectories,
): Promise<{ accountPublicKey: string; created: KeyName[] }> {
  const { keys, created } = await loadOrCreateKeys(directories.keys);
  const rendered = await renderTrust(keys);
  await mkdir(directories.server, { recursive: true, mode: 0o755 });
  await mkdir(directories.manager, { recursive: true, mode: 0o700 });
  await writeAtomically(join(directories.server, SERVER_TRUST_FILE), rendered.serverConfig, 0o644);
  await writeAtomically(join(directories.manager, MANAGER_CREDS_FILE), rendered.managerCreds, 0o600);
  await writeAtomically(join(directories.manager, MANAGER_ENV_FILE), rendered.managerEnv, 0o600);
  return { accountPublicKey: rendered.accountPublicKey, created };
}
