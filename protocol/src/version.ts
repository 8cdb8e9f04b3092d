/**
 * Version of the Manager <-> Worker wire contract. Every job records the version it was
 * submitted under, so a Worker that speaks another version is never handed it.
 */
export const PROTOCOL_VERSION = 1;
