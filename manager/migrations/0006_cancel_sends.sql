-- When a cancel command last went to the Worker holding an attempt, and how many went: a cancel
-- the Worker has not confirmed is sent again with a doubling wait (its first message may have
-- been lost with its stream), timed from these and not from the attempt's last change.
alter table attempts add column cancel_sent_at timestamptz;
alter table attempts add column cancel_sends integer not null default 0;
