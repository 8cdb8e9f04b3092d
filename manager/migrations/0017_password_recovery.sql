-- Password recovery (docs/recovery.md). Every code request writes one challenge, whether or not
-- an account has the identifier: the request path does the same work for every identifier, and
-- the recovery resolver (off the request path) decides later whether a code is made and sent.
create table recovery_challenges (
  id uuid primary key default gen_random_uuid(),
  channel text not null check (channel in ('email', 'sms')),
  -- The identifier's one key (identity/identifiers.ts for e-mail; E.164 for a phone), prefixed
  -- with its channel: the challenges and the limits of one identifier share it.
  identifier_key text not null,
  -- The locale of the code's message and the reset's notice: the one the request named
  -- (Accept-Language, else its body), or null until the resolver sets the account's own (or English).
  locale text,
  -- Set by the resolver when an account can receive a code here; null for every other identifier.
  account_id uuid references accounts (id) on delete cascade,
  -- HMAC of the code bound to this challenge's id (identity/one-time-codes.ts); null: no code
  -- exists, and every code typed is wrong.
  code_hmac text,
  -- Codes evaluated: counted by one conditional update before comparing, at most the maximum.
  attempts integer not null default 0 check (attempts >= 0),
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  -- Null until the resolver has looked the identifier up.
  resolved_at timestamptz,
  -- A newer challenge of the identifier, or a right code, ends this one.
  voided_at timestamptz,
  verified_at timestamptz
);
create index recovery_challenges_open on recovery_challenges (identifier_key, created_at desc)
  where voided_at is null and verified_at is null;
create index recovery_challenges_unresolved on recovery_challenges (created_at) where resolved_at is null;
create index recovery_challenges_expires on recovery_challenges (expires_at);

-- What a right code is exchanged for: a random token, stored as its SHA-256 only, single use.
create table recovery_tokens (
  token_hash bytea primary key check (length(token_hash) = 32),
  challenge_id uuid not null unique references recovery_challenges (id) on delete cascade,
  account_id uuid not null references accounts (id) on delete cascade,
  locale text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index recovery_tokens_expires on recovery_tokens (expires_at);

-- Recovery's rate limits, counted in the database so every replica shares them: code requests
-- and codes typed per identifier and per client address (across challenges), messages per
-- destination, resets per address. The same counting as sign_in_failures.
create table recovery_limits (
  scope text not null check (scope in
    ('request-identifier', 'request-address', 'guess-identifier', 'guess-address', 'destination', 'reset-address')),
  -- The identifier's key, the client address, or the destination (channel:recipient); a long
  -- key is stored as its SHA-256 (sign-in-limits.ts storedKey).
  key text not null,
  window_started_at timestamptz not null default now(),
  attempts integer not null default 1 check (attempts > 0),
  refused_until timestamptz,
  primary key (scope, key)
);
create index recovery_limits_window on recovery_limits (window_started_at);
