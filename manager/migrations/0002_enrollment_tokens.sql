-- One-time Worker enrollment tokens. Only HMAC-SHA256(ENROLLMENT_TOKEN_SECRET, token) is kept:
-- a database leak does not reveal a usable token.
create table enrollment_tokens (
  id uuid primary key,
  token_hash bytea not null unique,
  pool text check (pool in ('cpu', 'nvidia', 'intel', 'amd')),
  label text,
  created_by text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
