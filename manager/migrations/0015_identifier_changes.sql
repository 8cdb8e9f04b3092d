-- Pending changes of an account's e-mail address or phone number (the account portal's
-- PATCH /api/v1/me/identifiers): the new identifier takes effect only once the code sent to it
-- is verified (identity/accounts/identifier-changes.ts). One pending change per account and
-- channel: a new request replaces the previous one, whose code then proves nothing.
create table identifier_changes (
  -- Also the challenge the code's HMAC is bound to (identity/one-time-codes.ts).
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  channel text not null check (channel in ('email', 'phone')),
  -- The new e-mail address as typed (trimmed), or the phone number in E.164.
  identifier text not null check (char_length(identifier) between 3 and 1016),
  -- HMAC-SHA-256 (hex) of the code under ONE_TIME_CODE_HMAC_KEY; never the code.
  code_hmac text not null check (code_hmac ~ '^[0-9a-f]{64}$'),
  -- Tries counted by one conditional UPDATE before the code is compared (at most 5).
  attempts integer not null default 0 check (attempts >= 0),
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  unique (account_id, channel)
);
create index identifier_changes_expires_at on identifier_changes (expires_at);
