/**
 * Version of the Manager <-> Worker wire contract. Every job records the version it was
 * submitted under, so a Worker that speaks another version is never handed it.
 *
 * 2: command envelope ids are UUIDs (the outbox row's message_id, unique across databases),
 * and a lease's plan is the protocol's ExecutionPlan, validated by the Worker. A version-1
 * agent is refused at registration and re-registration (every message carries the version).
 *
 * 3: a lease names how its outputs are committed (`commit`: "copy" from a staging key, or
 * "multipart", completed by the Manager at the destination) and where each is uploaded
 * (`uploads`, formerly `staging`); a completed report's output may carry its incomplete
 * upload's id and part list.
 */
export const PROTOCOL_VERSION = 3;
