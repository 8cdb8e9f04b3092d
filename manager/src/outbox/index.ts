/**
 * The outbox room: the one writer of the outbox table (a change's announcements, written in
 * its transaction), the relay that publishes committed rows to JetStream, and the prefix's
 * streams it publishes to, which the event hub, the reports consumer and the Workers'
 * command consumers make sure of through it too.
 */
export { ensurePrefixStreams, ensureStreams, jetStreamPublish, PULL_EXPIRES_MS } from "./jetstream.ts";
export { createOutboxRelay, type EventEnvelope, OutboxRelay, type OutboxRow } from "./relay.ts";
export {
  enqueueOutbox,
  outboxInsert,
  type PendingAnnouncement,
  pendingCommand,
  sendCommand,
} from "./writer.ts";
