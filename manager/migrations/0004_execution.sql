-- Execution: which Worker instance holds an attempt, its lease deadline, and what the
-- Worker reported when it finished (promoted to the destinations by the Manager).
alter table attempts
  add column worker_id uuid references workers (id),
  add column instance_id uuid,
  add column dispatched_at timestamptz,
  add column dispatch_deadline timestamptz,
  add column accepted_at timestamptz,
  add column ended_at timestamptz,
  -- The `completed` report's outputs (staging locations, sizes, checksums, durations, codecs).
  add column result jsonb,
  -- Set once the Manager accepted the completion; promotion of the outputs follows.
  add column completion_accepted_at timestamptz;

create index attempts_held on attempts (worker_id)
  where state in ('DISPATCHED', 'RUNNING', 'UPLOADING', 'WAITING_FOR_STORAGE');
create index attempts_dispatch_deadline on attempts (dispatch_deadline) where state = 'DISPATCHED';
create index attempts_pause_expiry on attempts (upload_pause_expires_at) where state = 'WAITING_FOR_STORAGE';
create index attempts_promotion on attempts (completion_accepted_at)
  where completion_accepted_at is not null and state = 'UPLOADING';

alter table jobs add column deadline_at timestamptz;
update jobs set deadline_at = created_at + interval '72 hours' where deadline_at is null;
alter table jobs alter column deadline_at set not null;

-- The scheduler takes queued jobs of a pool by priority, then age.
create index jobs_queue on jobs (worker_pool, priority desc, queued_at, id) where state = 'QUEUED';

-- A draining Worker reports when it has finished everything it held.
alter table workers add column drained_at timestamptz;
