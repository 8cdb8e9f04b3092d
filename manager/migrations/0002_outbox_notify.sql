-- Wakes the outbox relay when announcements commit (NOTIFY is delivered at commit, once per
-- transaction and channel). The channel carries the schema so installations sharing a
-- database do not wake each other. The relay also polls, so a lost wake-up only delays.
create function outbox_notify() returns trigger language plpgsql as $$
begin
  perform pg_notify('tjm_outbox_' || tg_table_schema, '');
  return null;
end $$;

create trigger outbox_notify after insert on outbox
  for each statement execute function outbox_notify();
