-- The Admin console's own tables, beside the Manager's in the same schema (prefixed admin_).

-- A sign-in under way: PKCE verifier, state, nonce and return path, sealed, bound to the cookie.
create table admin_pre_sessions (
  id_hash bytea primary key,
  sealed bytea not null,
  expires_at timestamptz not null
);

-- A signed-in console session. The cookie holds a random id; only its SHA-256 is stored, so a
-- database read does not yield a usable cookie. The tokens are sealed (AES-256-GCM).
create table admin_sessions (
  id_hash bytea primary key,
  account_sub text not null,
  sid text,
  sealed_tokens bytea not null,
  access_expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index admin_sessions_sid on admin_sessions (sid);
create index admin_sessions_account_sub on admin_sessions (account_sub);

-- Logout tokens' jti values already acted on, kept until the token could no longer be accepted.
create table admin_logout_token_ids (
  jti text primary key,
  expires_at timestamptz not null
);
