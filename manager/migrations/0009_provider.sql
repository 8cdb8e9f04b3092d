-- The built-in provider's signing keys. Each private JWK is stored encrypted (AES-256-GCM under
-- a key derived from PROVIDER_KEY_ENCRYPTION_KEY); the public half is kept in the clear so a
-- key can be published without decrypting anything.
--
-- A key is published from created_at and signs from signs_from (created_at + the publish lead,
-- so every replica and every relying party's JWKS cache holds it before a token names it). The
-- newest key whose signs_from has passed signs; an older one stays published until the tokens
-- it signed have expired, counted from when its successor started signing (provider/keys.ts).
create table provider_signing_keys (
  kid text primary key,
  alg text not null check (alg in ('RS256')),
  public_jwk jsonb not null check (jsonb_typeof(public_jwk) = 'object'),
  -- 12-byte nonce || ciphertext || 16-byte tag.
  private_jwk_encrypted bytea not null,
  created_at timestamptz not null default now(),
  signs_from timestamptz not null,
  check (signs_from >= created_at)
);
create index provider_signing_keys_signs_from on provider_signing_keys (signs_from);

-- A limit reached refuses sign-ins until this instant (the window's length from then), after
-- which counting starts afresh: never a permanent lock an attacker could cause.
alter table sign_in_failures add column refused_until timestamptz;
-- For scope 'account' the key is the e-mail address, trimmed and lower-cased, not the account's
-- id as 0007 said: an address no account has is limited exactly like one that has an account.
