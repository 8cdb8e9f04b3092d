/**
 * A private nats-server in operator mode (decentralized JWT auth), for tests of how TJM mints
 * and scopes NATS users. Every key and JWT is made afresh at start, so no secret lives in the
 * repository and no two runs share trust.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodeAccount, encodeOperator, encodeUser, fmtCreds } from "@nats-io/jwt";
import { createAccount, createOperator, createUser } from "@nats-io/nkeys";
import { spawnNatsServer } from "./services.ts";

export interface OperatorModeNats {
  /** nats://127.0.0.1:<port> */
  url: string;
  /** "A…" identity of the TJM account. */
  accountPublicKey: string;
  /** "SA…" seed of the account's extra signing key (what the Manager signs Worker user JWTs with). */
  accountSigningSeed: string;
  /** .creds text of a manager user with no pub/sub restrictions. */
  managerCreds: string;
  /** Path of a 0600 file holding managerCreds. */
  managerCredsFile: string;
  /** Stops the server and removes its temp dir. */
  stop(): Promise<void>;
}

const decoder = new TextDecoder();

/** Fresh keys and JWTs of an operator, its system account and the TJM account. */
export interface OperatorTrust {
  accountPublicKey: string;
  accountSigningSeed: string;
  managerCreds: string;
  /**
   * The lines of a server configuration that trust them: the operator, the system account and
   * a MEMORY resolver preloaded with both accounts (every server of a cluster gets the same).
   */
  serverConfig: string[];
}

export async function createOperatorTrust(): Promise<OperatorTrust> {
  const operator = createOperator();
  const system = createAccount();
  const account = createAccount();
  const signingKey = createAccount();
  const manager = createUser();

  const systemPublicKey = system.getPublicKey();
  const accountPublicKey = account.getPublicKey();
  const operatorJwt = await encodeOperator("TJM-TEST", operator, {
    system_account: systemPublicKey,
  });
  const systemJwt = await encodeAccount("SYS", system, {}, { signer: operator });
  const accountJwt = await encodeAccount(
    "TJM",
    account,
    {
      // The server reads a limit missing from the JWT as 0, not as unlimited: without these it
      // refuses every connection ("maximum account active connections exceeded") and keeps
      // JetStream disabled for the account.
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
      signing_keys: [signingKey.getPublicKey()],
    },
    { signer: operator },
  );
  // Signed by the signing key rather than the identity key, as the Manager's users will be;
  // encodeUser then sets issuer_account to the account's identity.
  const managerJwt = await encodeUser("manager", manager, accountPublicKey, {}, { signer: signingKey });
  // JSON string literals are valid quoted strings in the NATS config syntax.
  const q = JSON.stringify;
  return {
    accountPublicKey,
    accountSigningSeed: decoder.decode(signingKey.getSeed()),
    managerCreds: decoder.decode(fmtCreds(managerJwt, manager)),
    serverConfig: [
      `operator: ${q(operatorJwt)}`,
      `system_account: ${q(systemPublicKey)}`,
      "resolver: MEMORY",
      "resolver_preload: {",
      `  ${accountPublicKey}: ${q(accountJwt)}`,
      `  ${systemPublicKey}: ${q(systemJwt)}`,
      "}",
    ],
  };
}

export async function startOperatorModeNats(): Promise<OperatorModeNats> {
  const trust = await createOperatorTrust();
  const dir = await mkdtemp(join(tmpdir(), "tjm-nats-operator-"));
  const managerCredsFile = join(dir, "manager.creds");
  await writeFile(managerCredsFile, trust.managerCreds, { mode: 0o600 });
  const configFile = join(dir, "nats.conf");
  await writeFile(
    configFile,
    [
      "host: 127.0.0.1",
      // The server picks a free port and logs it: no race with other files for a port.
      "port: -1",
      ...trust.serverConfig,
      `jetstream: { store_dir: ${JSON.stringify(join(dir, "jetstream"))} }`,
      "",
    ].join("\n"),
  );

  const server = await spawnNatsServer(["-c", configFile], dir);
  return {
    url: server.url,
    accountPublicKey: trust.accountPublicKey,
    accountSigningSeed: trust.accountSigningSeed,
    managerCreds: trust.managerCreds,
    managerCredsFile,
    stop: server.stop,
  };
}
