-- Message ids that no other outbox row anywhere will have. JetStream silently drops a message
-- whose Nats-Msg-Id it stored within its duplicate window, and a database restored from a
-- backup or re-created on the same NATS reuses the bigint ids; `id` still orders the rows.
alter table outbox add column message_id uuid not null default gen_random_uuid();

-- Which installation this database is. Made once, here: a restored dump keeps it (a replica
-- of the same installation), a re-created database gets a new one. Managers of two
-- installations must never share a subject prefix: each would consume the other's reports.
create table installation (
  id uuid not null default gen_random_uuid(),
  created_at timestamptz not null default now(),
  only_row boolean primary key default true check (only_row)
);
insert into installation default values;
