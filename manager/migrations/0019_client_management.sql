-- Client management (the management API and the portal's developer apps).
--
-- Secret rotation with a grace window: the secret being replaced stays valid until
-- previous_secret_expires_at (Keycloak's "rotated secret"), compared in the provider's
-- client-authentication hook. One previous secret at most: a second rotation replaces it, so
-- its grace ends at once. Both are HMACs under CLIENT_SECRET_HMAC_KEY, never a secret.
alter table oauth_clients
  add column previous_client_secret_hmac text,
  add column previous_secret_expires_at timestamptz,
  add column secret_rotated_at timestamptz,
  -- The lifetime of the client's access tokens; null: the installation's ACCESS_TOKEN_TTL_SECONDS.
  add column access_token_ttl_seconds integer check (access_token_ttl_seconds between 30 and 600),
  -- When authorization_version last moved: the provider refuses a refresh token issued before
  -- (refresh tokens carry no version of their own). Null: never since the client was created.
  add column authorization_changed_at timestamptz,
  -- A deleted client stays as a tombstone (refused everywhere, listed nowhere) so the
  -- back-channel logouts its deletion queued can still be signed and sent for it.
  add column deleted_at timestamptz,
  add check ((previous_client_secret_hmac is null) = (previous_secret_expires_at is null)),
  add check (previous_client_secret_hmac is null or client_secret_hmac is not null),
  add check (deleted_at is null or disabled_at is not null);

-- The management list's filters and its stable order (created_at, id).
create index oauth_clients_created on oauth_clients (created_at, id) where deleted_at is null;
create index oauth_clients_owner on oauth_clients (owner_account_id) where owner_account_id is not null;

-- What else a client may do, each managed under /clients/{client}/… (docs/client-management.md):
-- the account roles its tokens may carry (roles claim = the account's roles ∩ these; none: no
-- roles), the accounts that may use it (none: every account), and the identity sources its
-- accounts may come from (none: every source). Each change bumps authorization_version.
create table oauth_client_roles (
  client_id uuid not null references oauth_clients (id) on delete cascade,
  role text not null check (role in ('operator', 'client-admin')),
  added_at timestamptz not null default now(),
  primary key (client_id, role)
);
create table oauth_client_users (
  client_id uuid not null references oauth_clients (id) on delete cascade,
  account_id uuid not null references accounts (id) on delete cascade,
  added_at timestamptz not null default now(),
  primary key (client_id, account_id)
);
-- built-in: TJM's own account directory (the built-in provider's sign-in); operator-issuer: the
-- external operator issuer (OIDC_OPERATOR_ISSUER_URL).
create table oauth_client_directory_sources (
  client_id uuid not null references oauth_clients (id) on delete cascade,
  source text not null check (source in ('built-in', 'operator-issuer')),
  added_at timestamptz not null default now(),
  primary key (client_id, source)
);
