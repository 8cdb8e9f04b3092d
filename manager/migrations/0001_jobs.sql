-- Tenancy: the API has no route for these; `npm run manager -- projects create` makes them.
create table organizations (
  id uuid primary key,
  name text not null unique,
  created_at timestamptz not null default now()
);

create table projects (
  id uuid primary key,
  organization_id uuid not null references organizations (id),
  name text not null,
  created_at timestamptz not null default now(),
  unique (organization_id, name)
);

create table jobs (
  id uuid primary key,
  organization_id uuid not null references organizations (id),
  project_id uuid not null references projects (id),
  state text not null check (state in ('QUEUED', 'RUNNING', 'CANCEL_REQUESTED', 'CANCELLED', 'COMPLETED', 'FAILED', 'WAITING_FOR_STORAGE')),
  priority integer not null check (priority between -1000 and 1000),
  worker_pool text not null check (worker_pool in ('cpu', 'nvidia', 'intel', 'amd')),
  required_capabilities text[] not null,
  execution_plan jsonb not null,
  protocol_version integer not null,
  current_attempt_id uuid not null,
  -- Highest fencing token handed out for this job; each new attempt takes the next one.
  last_fencing_token bigint not null,
  queued_at timestamptz not null,
  started_at timestamptz,
  completed_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);

-- The list route pages newest first, optionally by state and pool; each shape has an index.
create index jobs_created on jobs (created_at desc, id desc);
create index jobs_state_created on jobs (state, created_at desc, id desc);
create index jobs_pool_state_created on jobs (worker_pool, state, created_at desc, id desc);

create table attempts (
  id uuid primary key,
  job_id uuid not null references jobs (id),
  attempt_number integer not null check (attempt_number >= 1),
  state text not null check (state in ('CREATED', 'DISPATCHED', 'RUNNING', 'UPLOADING', 'WAITING_FOR_STORAGE', 'SUCCEEDED', 'FAILED', 'CANCELLED')),
  fencing_token bigint not null,
  failure_code text,
  failure_message text,
  logs_uri text,
  encoding_recovery_count integer not null default 0,
  upload_recovery_count integer not null default 0,
  upload_paused_at timestamptz,
  upload_pause_expires_at timestamptz,
  upload_resume_requested_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  unique (job_id, attempt_number),
  unique (job_id, fencing_token)
);

alter table jobs
  add constraint jobs_current_attempt_fk foreign key (current_attempt_id) references attempts (id)
  deferrable initially deferred;

-- Every state change inserts its announcements here in the same transaction; the relay
-- publishes them to NATS in id order (Nats-Msg-Id = id) and marks them published.
create table outbox (
  id bigint generated always as identity primary key,
  kind text not null,
  subject text not null,
  payload jsonb not null,
  created_at timestamptz not null default now(),
  published_at timestamptz
);
create index outbox_unpublished on outbox (id) where published_at is null;

-- Exact totals for the list route without counting a million rows: each change of a job's
-- state appends a delta (no row contention between concurrent submits), and a compaction
-- folds the deltas into job_state_counts. total = counts + pending deltas.
create table job_state_counts (
  state text not null,
  worker_pool text not null,
  count bigint not null,
  primary key (state, worker_pool)
);

create table job_state_count_deltas (
  state text not null,
  worker_pool text not null,
  delta integer not null
);

create function job_state_count_delta() returns trigger language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    insert into job_state_count_deltas values (old.state, old.worker_pool, -1);
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    insert into job_state_count_deltas values (new.state, new.worker_pool, 1);
  end if;
  return null;
end $$;

create trigger jobs_count_insert_delete after insert or delete on jobs
  for each row execute function job_state_count_delta();
create trigger jobs_count_update after update of state, worker_pool on jobs
  for each row when (old.state is distinct from new.state or old.worker_pool is distinct from new.worker_pool)
  execute function job_state_count_delta();
