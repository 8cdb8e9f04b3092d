/**
 * A real SMTP server on loopback (smtp-server) that keeps what it accepts, parsed (mailparser):
 * the tests read the e-mails TJM sent from it, as later tests read recovery and MFA codes.
 * Its behaviour can be switched while it runs: accept, refuse with a reply code (4xx: try
 * later; 5xx: never), or hold a message's DATA unanswered (a send in flight), and it can be
 * stopped and started again on the same port (connection refused meanwhile).
 */
import type { AddressInfo } from "node:net";
import { waitFor } from "@tjm/devstack/services";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export type MailboxMode = { kind: "accept" } | { kind: "refuse"; code: number } | { kind: "hold" };

export interface ReceivedMail {
  /** The envelope's recipients. */
  to: string[];
  parsed: ParsedMail;
  /** The raw message as received. */
  raw: string;
}

/** Bigger than any message TJM sends; smtp-server enforces SIZE only with rejectOversized. */
const MAX_MESSAGE_BYTES = 256 * 1024;

export class Mailbox {
  readonly received: ReceivedMail[] = [];
  /** DATA commands seen, accepted or not (a held one included). */
  dataCommands = 0;
  mode: MailboxMode = { kind: "accept" };
  private server: SMTPServer | undefined;
  private held: (() => void)[] = [];

  private constructor(public port: number) {}

  /** The Manager's settings that send its e-mail here. */
  managerEnv(): Record<string, string> {
    return {
      EMAIL_TRANSPORT: "smtp",
      SMTP_HOST: "127.0.0.1",
      SMTP_PORT: String(this.port),
      SMTP_TLS: "none",
      EMAIL_FROM: "no-reply@tjm.example",
    };
  }

  /** Listens on 127.0.0.1 (on `port`, or a free one). */
  static async start(port = 0): Promise<Mailbox> {
    const mailbox = new Mailbox(port);
    await mailbox.listen();
    return mailbox;
  }

  private listen(): Promise<void> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS", "AUTH"],
      size: MAX_MESSAGE_BYTES,
      rejectOversized: true,
      logger: false,
      // A stop drops open connections after this, as a crashed server would.
      closeTimeout: 200,
      onRcptTo: (_address, _session, callback) => {
        if (this.mode.kind !== "refuse") return callback();
        const refusal = Object.assign(new Error(`refused (test mode ${this.mode.code})`), {
          responseCode: this.mode.code,
        });
        callback(refusal);
      },
      onData: (stream, session, callback) => {
        this.dataCommands++;
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => {
          const finish = async () => {
            const raw = Buffer.concat(chunks).toString("utf8");
            this.received.push({
              to: session.envelope.rcptTo.map((address) => address.address),
              parsed: await simpleParser(raw),
              raw,
            });
            callback();
          };
          if (this.mode.kind === "hold") this.held.push(() => void finish());
          else void finish();
        });
      },
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => {
        this.port = (server.server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  /** Answers the held messages (they are accepted) and accepts what comes next. */
  release(): void {
    this.mode = { kind: "accept" };
    for (const answer of this.held.splice(0)) answer();
  }

  /**
   * Forgets the held messages without answering them and accepts what comes next: a message is
   * the server's only once it answered 250 to its DATA, so these were never accepted.
   */
  dropHeld(): void {
    this.mode = { kind: "accept" };
    this.held = [];
  }

  /** Resolves once a held DATA is waiting for its answer. */
  async untilHolding(timeoutMs = 10_000): Promise<void> {
    await waitFor("a message held by the SMTP server", async () => this.held.length > 0, timeoutMs);
  }

  /** The mails accepted for `to`, once `count` have arrived. */
  async untilReceived(to: string, count = 1, timeoutMs = 15_000): Promise<ReceivedMail[]> {
    const mine = () => this.received.filter((mail) => mail.to.includes(to));
    await waitFor(`${count} e-mail(s) to ${to}`, async () => mine().length >= count, timeoutMs);
    return mine();
  }

  /** Stops listening and drops open connections: a client now gets "connection refused". */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.held = [];
    if (!server) return;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Listens again on the same port. */
  async restart(): Promise<void> {
    await this.stop();
    await this.listen();
  }
}
