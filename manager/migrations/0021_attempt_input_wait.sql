-- An attempt whose reads of its input wait for storage (the Worker's `input-waiting` report):
-- since when, and the store's last error. Both null while it reads, and once it leaves RUNNING.
alter table attempts
  add column input_wait_since timestamptz,
  add column input_wait_error text;
