-- Second factors of sign-in (identity/factors/): TOTP, SMS and e-mail factors, the enrolments
-- under way, the codes sent at sign-in, and recovery codes. identity/factors is the only writer.
create table mfa_factors (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  type text not null check (type in ('totp', 'sms', 'email')),
  -- The account's phone (E.164) or e-mail address the codes go to; null for TOTP.
  destination text check ((type = 'totp') = (destination is null)),
  -- TOTP only: the secret, AES-256-GCM under MFA_SECRET_ENCRYPTION_KEY (iv ‖ tag ‖ ciphertext).
  secret_ciphertext bytea check ((type = 'totp') = (secret_ciphertext is not null)),
  -- TOTP only: the last time step a code was accepted for; that step and every earlier one
  -- are refused from then on (a code seen once proves nothing again).
  last_time_step bigint,
  -- Wrong codes of this factor in the current window, counted by one conditional UPDATE
  -- before the code is compared.
  failures integer not null default 0 check (failures >= 0),
  failures_window_started_at timestamptz not null default now(),
  created_at timestamptz not null default now(),
  last_used_at timestamptz
);
create index mfa_factors_account on mfa_factors (account_id);
-- One TOTP factor per account; one factor per destination.
create unique index mfa_factors_one_totp on mfa_factors (account_id) where type = 'totp';
create unique index mfa_factors_destination on mfa_factors (account_id, type, destination)
  where destination is not null;

-- An enrolment started and not yet verified: one per account and type (a new start replaces it).
create table mfa_enrolments (
  -- Also the challenge a code's HMAC is bound to (identity/one-time-codes.ts).
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  type text not null check (type in ('totp', 'sms', 'email')),
  destination text check ((type = 'totp') = (destination is null)),
  secret_ciphertext bytea check ((type = 'totp') = (secret_ciphertext is not null)),
  -- SMS and e-mail: HMAC-SHA-256 (hex) of the code sent; never the code.
  code_hmac text check ((type = 'totp') = (code_hmac is null)),
  attempts integer not null default 0 check (attempts >= 0),
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  unique (account_id, type)
);
create index mfa_enrolments_expires_at on mfa_enrolments (expires_at);

-- A code sent by SMS or e-mail for a sign-in: one per factor (a new send replaces it).
create table mfa_sign_in_codes (
  id uuid primary key default gen_random_uuid(),
  factor_id uuid not null unique references mfa_factors (id) on delete cascade,
  code_hmac text not null check (code_hmac ~ '^[0-9a-f]{64}$'),
  attempts integer not null default 0 check (attempts >= 0),
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);

-- Every factor code sent, per destination: MFA_CODE_SENDS_PER_HOUR bounds them.
create table mfa_code_sends (
  destination text not null,
  sent_at timestamptz not null default now()
);
create index mfa_code_sends_destination on mfa_code_sends (destination, sent_at);

-- Recovery codes: HMAC-SHA-256 (hex) under the one-time-code key, each used once.
create table mfa_recovery_codes (
  account_id uuid not null references accounts (id) on delete cascade,
  code_hmac text not null check (code_hmac ~ '^[0-9a-f]{64}$'),
  used_at timestamptz,
  created_at timestamptz not null default now(),
  primary key (account_id, code_hmac)
);
