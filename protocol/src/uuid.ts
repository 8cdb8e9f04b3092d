/**
 * A UUID as PostgreSQL and crypto.randomUUID() write it: lowercase, hyphenated, RFC 9562
 * version and variant. Lowercase only, because ids are compared as strings and embedded in
 * NATS subjects, which are case-sensitive: an uppercase spelling would name other subjects
 * than the ones a Worker's credentials allow.
 */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
