-- What the account portal shows of each provider session besides what oidc-provider keeps (its
-- sign-in time and last save): where and from what the session was last used. Kept on the
-- browser's row of the session (browser_sessions, written at each authorization through it), so
-- it ends with the session. The address and user agent are the browser's at its latest
-- authorization; a token refresh (which comes from the client's back end, not the browser) moves
-- only last_used_at.
alter table browser_sessions
  add column client_address inet,
  -- Cut to 512 characters: a header a client chooses is not stored unbounded.
  add column user_agent text check (char_length(user_agent) <= 512),
  add column last_used_at timestamptz not null default now();
