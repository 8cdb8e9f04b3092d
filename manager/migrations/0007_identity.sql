-- Identity: accounts and roles, OAuth clients, the built-in provider's records, the browsers
-- that remember accounts, sign-in failure counters and the audit trail (DESIGN.md §8).
-- Not here yet, each with the issue that needs it: MFA factors and recovery codes (account
-- portal), password-recovery codes and tokens (password recovery), client resources/roles/
-- users/directory sources (client management). They reference accounts and oauth_clients by id.

-- E-mail is unique case-insensitively through an index on lower(email), not citext: an
-- extension lives in one schema of the database, and every test (and a second installation)
-- migrates its own schema, where `create extension if not exists` would find it elsewhere.
create table accounts (
  id uuid primary key default gen_random_uuid(),
  email text not null check (email = btrim(email) and email like '%_@_%'),
  email_verified boolean not null default false,
  phone text check (phone ~ '^\+[1-9][0-9]{6,14}$'),
  phone_verified boolean not null default false,
  display_name text not null default '',
  -- argon2id PHC string; null for an account that has not set a password yet.
  password_hash text,
  disabled_at timestamptz,
  -- An access or refresh token issued before this instant is refused on every path that
  -- accepts a token (STYLE 15). Moved to now() when the account is disabled, deleted, logged
  -- out everywhere or its password is reset. '-infinity' at creation: a token's iat has whole
  -- seconds, so now() here would refuse the first token issued in the account's first second.
  tokens_valid_after timestamptz not null default '-infinity',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index accounts_email_key on accounts (lower(email));
create unique index accounts_phone_key on accounts (phone) where phone is not null;

-- operator: only holders get tokens for the operations audience. client-admin: the spec's
-- "assigned admin login relationship" that client management requires.
create table account_roles (
  account_id uuid not null references accounts (id) on delete cascade,
  role text not null check (role in ('operator', 'client-admin')),
  granted_at timestamptz not null default now(),
  -- Null once the granting account is deleted, or for a role granted from the command line.
  granted_by uuid references accounts (id) on delete set null,
  primary key (account_id, role)
);

-- The provider reads its clients from this table on every lookup (provider/adapter.ts), so
-- client management changes what it sees on the next request. Columns for what TJM decides
-- on; `metadata` holds the rest of oidc-provider's client metadata, in its snake_case names.
create table oauth_clients (
  id uuid primary key default gen_random_uuid(),
  client_id text not null unique,
  -- HMAC-SHA-256 of the secret under the server key (identity/secrets.ts); never the secret.
  client_secret_hmac text,
  name text not null,
  redirect_uris text[] not null default '{}',
  post_logout_redirect_uris text[] not null default '{}',
  grant_types text[] not null default '{authorization_code}',
  response_types text[] not null default '{code}',
  -- client_secret_jwt is not offered: it needs the plain secret as an HMAC key.
  token_endpoint_auth_method text not null default 'client_secret_basic'
    check (token_endpoint_auth_method in ('client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none')),
  -- A first-party client (the Admin console, the account portal) skips the consent prompt.
  first_party boolean not null default false,
  backchannel_logout_uri text,
  -- Changing a live grant bumps it; the Manager refuses tokens that name an older one.
  authorization_version bigint not null default 1 check (authorization_version > 0),
  -- A developer-owned application (the portal's developer-apps); null for installation clients.
  owner_account_id uuid references accounts (id) on delete cascade,
  disabled_at timestamptz,
  metadata jsonb not null default '{}' check (jsonb_typeof(metadata) = 'object'),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((client_secret_hmac is not null) = (token_endpoint_auth_method in ('client_secret_basic', 'client_secret_post')))
);

-- The protected resources (resource indicators) a client may get tokens for, with the scopes
-- it may ask there: the spec's "oauth-grants" per resource key. A table rather than an array
-- so one grant can be set or removed alone, each change bumping authorization_version.
create table oauth_client_resources (
  client_id uuid not null references oauth_clients (id) on delete cascade,
  resource text not null,
  scopes text[] not null default '{}',
  granted_at timestamptz not null default now(),
  primary key (client_id, resource)
);

-- The projects a client_credentials (tenant API) client acts for: its tokens' projects claim.
create table oauth_client_projects (
  client_id uuid not null references oauth_clients (id) on delete cascade,
  project_id uuid not null references projects (id) on delete cascade,
  primary key (client_id, project_id)
);

-- Every record oidc-provider stores (sessions, interactions, grants, codes, tokens …) in one
-- table, as logto's oidc_model_instances (STYLE 14). `expires_at` null: the provider gave no
-- lifetime. Lookups always add `expires_at > now()`, so a record is gone at its expiry even
-- before purgeExpiredRecords deletes it. account_id and sids are copied out of the payload
-- so the portal can list an account's sessions and grants, and find the session of a token's
-- sid, without scanning JSON.
create table oidc_records (
  model text not null,
  id text not null,
  payload jsonb not null,
  grant_id text,
  uid text,
  user_code text,
  account_id text,
  sids text[],
  expires_at timestamptz,
  consumed_at timestamptz,
  primary key (model, id)
);
create index oidc_records_grant_id on oidc_records (grant_id) where grant_id is not null;
create index oidc_records_uid on oidc_records (model, uid) where uid is not null;
create index oidc_records_user_code on oidc_records (model, user_code) where user_code is not null;
create index oidc_records_account on oidc_records (model, account_id) where account_id is not null;
create index oidc_records_sids on oidc_records using gin (sids) where sids is not null;
create index oidc_records_expires_at on oidc_records (expires_at) where expires_at is not null;

-- Browsers that remember accounts. oidc-provider's Session is one account per session cookie,
-- and its record lives in oidc_records; a browser that signed in several accounts keeps one
-- provider session per account. The browser is known by a long-lived cookie of its own, stored
-- as an HMAC like every bearer secret; browser_sessions maps it to each remembered account's
-- provider session (its uid, whose record holds the per-client sids tokens carry), so the
-- portal can list them, switch between them and log every one out. The provider's record stays
-- the truth about expiry: a row whose session record expired is not a remembered account.
create table browsers (
  id uuid primary key default gen_random_uuid(),
  cookie_hmac text not null unique,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now()
);
create table browser_sessions (
  session_uid text primary key,
  browser_id uuid not null references browsers (id) on delete cascade,
  account_id uuid not null references accounts (id) on delete cascade,
  remembered_at timestamptz not null default now(),
  unique (browser_id, account_id)
);
create index browser_sessions_account on browser_sessions (account_id);

-- Failed sign-ins per account and per client address, shared by every replica. One statement
-- counts and decides (STYLE 13): insert … on conflict (scope, key) do update set failures =
-- case when the window has passed then 1 else failures + 1 end … returning failures,
-- window_started_at; a sign-in is slowed by what that row says, never by a read before it.
create table sign_in_failures (
  scope text not null check (scope in ('account', 'address')),
  -- The account's id, or the client address (inet text form).
  key text not null,
  window_started_at timestamptz not null default now(),
  failures integer not null default 1 check (failures > 0),
  primary key (scope, key)
);
create index sign_in_failures_window on sign_in_failures (window_started_at);

-- One row per authentication event (issue 12 §5). No foreign key on the actor: the trail
-- outlives a deleted account. details never holds a secret, a code or a password.
create table audit_events (
  id bigint generated always as identity primary key,
  at timestamptz not null default now(),
  actor_account_id uuid,
  event text not null,
  client_id text,
  address inet,
  result text not null check (result in ('success', 'failure')),
  details jsonb not null default '{}' check (jsonb_typeof(details) = 'object')
);
create index audit_events_actor on audit_events (actor_account_id, at) where actor_account_id is not null;
create index audit_events_at on audit_events (at);
