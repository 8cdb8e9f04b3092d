-- Back-channel logouts TJM owes relying parties (OpenID Connect Back-Channel Logout 1.0): one row
-- per (client, account, sid) of a session TJM ended itself (identity/sessions/), written in the
-- same transaction that ended it. oidc-provider sends them only from its own end-session page,
-- and once, so a Node Manager's sender delivers these through the provider's client
-- (client.backchannelLogout, which signs the logout token) and retries with backoff; a Deno
-- Manager has no provider and leaves them for a Node one.
--
-- No foreign keys: a logout is owed even when the account is deleted in the same transaction,
-- and a client deleted since is a failure with its reason, not a vanished row.
create table backchannel_logout_outbox (
  id bigint generated always as identity primary key,
  client_id text not null,
  -- The logout token's sub: the account's id as the provider names it.
  account_id text not null,
  -- The session as this client knows it (the sid its ID and access tokens carried).
  sid text not null,
  created_at timestamptz not null default now(),
  attempts integer not null default 0 check (attempts >= 0),
  next_attempt_at timestamptz not null default now(),
  -- Why the last attempt failed (also the reason once failed_at is set).
  last_error text,
  sent_at timestamptz,
  failed_at timestamptz,
  check (sent_at is null or failed_at is null)
);
-- What a sender claims: rows still owed, by when they are due.
create index backchannel_logout_outbox_due on backchannel_logout_outbox (next_attempt_at)
  where sent_at is null and failed_at is null;
-- What the sender purges once settled rows are old.
create index backchannel_logout_outbox_settled on backchannel_logout_outbox (coalesce(sent_at, failed_at))
  where sent_at is not null or failed_at is not null;
