-- Workers enroll once with a token and are known by their NKey from then on. Each
-- (re-)registration starts a new instance; heartbeats from older instances are ignored.
create table workers (
  id uuid primary key,
  public_key text not null unique,
  name text not null,
  pool text not null check (pool in ('cpu', 'nvidia', 'intel', 'amd')),
  protocol_version integer not null,
  instance_id uuid not null,
  enrollment_token_id uuid not null references enrollment_tokens (id),
  -- What the host supports (probe) and the operator's cap from WORKER_CAPACITY.
  host_capacity integer not null check (host_capacity >= 0),
  capacity_cap integer check (capacity_cap >= 1),
  certification text not null check (certification in ('READY', 'DEGRADED')),
  certification_reasons jsonb not null,
  capabilities text[] not null,
  hardware_encoders jsonb not null,
  ffmpeg_version text not null,
  connectivity text not null check (connectivity in ('ONLINE', 'SUSPECTED', 'OFFLINE')),
  connectivity_changed_at timestamptz not null,
  -- Written at registration and with each connectivity change, not per heartbeat; the
  -- Manager keeps the latest heartbeat in memory.
  last_heartbeat_at timestamptz,
  drain_requested_at timestamptz,
  disabled_at timestamptz,
  disabled_by text,
  registered_at timestamptz not null,
  instance_started_at timestamptz not null,
  updated_at timestamptz not null
);
create index workers_registered on workers (registered_at desc, id desc);
create index workers_connectivity on workers (connectivity, registered_at desc, id desc);

-- One-time nonces a Worker signs with its NKey to prove who it is after a restart or to get
-- fresh NATS credentials.
create table worker_challenges (
  id uuid primary key,
  worker_id uuid not null references workers (id),
  purpose text not null check (purpose in ('re-registration', 'credentials')),
  nonce text not null,
  expires_at timestamptz not null,
  used_at timestamptz
);
create index worker_challenges_worker on worker_challenges (worker_id);
