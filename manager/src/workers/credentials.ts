/**
 * NATS credentials for Workers: the permissions a Worker's user JWT carries, and the signer
 * that issues it. A Worker may publish only on its own heartbeat, progress and reports
 * subjects, call only the JetStream API of its own durable consumer, and subscribe only to
 * its own inbox prefix, where the replies to those calls arrive.
 */
import { encodeUser } from "@nats-io/jwt";
import { fromSeed } from "@nats-io/nkeys";
import { streams, subjects, workerConsumerName, workerInboxPrefix } from "@tjm/protocol";

export interface WorkerPermissions {
  pub: { allow: string[] };
  sub: { allow: string[] };
}

export function workerPermissions(subjectPrefix: string, workerId: string): WorkerPermissions {
  const commandsStream = streams(subjectPrefix).commands.name;
  const consumer = `${commandsStream}.${workerConsumerName(workerId)}`;
  return {
    pub: {
      allow: [
        subjects.workerHeartbeat(subjectPrefix, workerId),
        subjects.workerProgress(subjectPrefix, workerId),
        subjects.workerReports(subjectPrefix, workerId),
        `$JS.API.CONSUMER.INFO.${consumer}`,
        `$JS.API.CONSUMER.MSG.NEXT.${consumer}`,
        `$JS.ACK.${consumer}.>`,
      ],
    },
    sub: { allow: [`${workerInboxPrefix(subjectPrefix, workerId)}.>`] },
  };
}

export interface IssuedCredentials {
  userJwt: string;
  expiresAt: Date;
}

/** Issues Worker credentials; `undefined` when NATS runs without authentication. */
export type CredentialIssuer = ((worker: {
  workerId: string;
  publicKey: string;
}) => Promise<IssuedCredentials>) & {
  readonly ttlSeconds: number;
};

export interface CredentialIssuerOptions {
  subjectPrefix: string;
  accountPublicKey: string;
  /** Seed of a signing key the account JWT lists; the JWT names the account as issuer_account. */
  signingKeySeed: string;
  ttlSeconds: number;
  now?: () => Date;
}

export function createCredentialIssuer(options: CredentialIssuerOptions): CredentialIssuer {
  const signer = fromSeed(new TextEncoder().encode(options.signingKeySeed));
  const now = options.now ?? (() => new Date());
  const issue = async ({ workerId, publicKey }: { workerId: string; publicKey: string }) => {
    const issuedAt = Math.floor(now().getTime() / 1000);
    const expiresAt = issuedAt + options.ttlSeconds;
    const userJwt = await encodeUser(
      workerConsumerName(workerId),
      publicKey,
      signer,
      {
        issuer_account: options.accountPublicKey,
        ...workerPermissions(options.subjectPrefix, workerId),
        // A bearer JWT would connect without the NKey; the seed must stay necessary.
        bearer_token: false,
      },
      { exp: expiresAt },
    );
    return { userJwt, expiresAt: new Date(expiresAt * 1000) };
  };
  return Object.assign(issue, { ttlSeconds: options.ttlSeconds });
}
