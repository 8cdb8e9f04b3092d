/** The delivery scenario's table and target. */
import { count, met, seconds, table } from "../report.ts";
import type { DeliveryResult } from "./run.ts";

/** Far above what sign-ins and recoveries ask of one installation: a code per sign-in at most. */
const TARGETS = { emailsPerSecond: 100 };

const CHANNEL_NAMES = { email: "e-mail to a local SMTP server", sms: "SMS to a local webhook (signed)" };

export function deliveryReport(result: DeliveryResult | undefined): string {
  const rows = (result?.channels ?? []).map((row) => [
    CHANNEL_NAMES[row.channel],
    count(row.messages),
    seconds(row.seconds),
    count(row.perSecond),
  ]);
  return `## Message delivery: committed outbox messages sent and marked, one sender (batches of 20, 4 SMTP connections)\n\n${table(["channel", "messages", "seconds", "messages/s"], rows)}`;
}

export function deliveryTargets(result: DeliveryResult | undefined): string[][] {
  const email = result?.channels.find((row) => row.channel === "email");
  return [
    [
      `e-mail delivery >= ${count(TARGETS.emailsPerSecond)} messages/s`,
      email ? `${count(email.perSecond)} messages/s` : "n/a",
      met(email ? email.perSecond >= TARGETS.emailsPerSecond : undefined),
    ],
  ];
}
