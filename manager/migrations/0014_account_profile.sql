-- The account portal's profile (docs/profile.md): what a person says about themselves, and
-- the avatar uploads that are signed for them. Written only by identity/accounts/.
alter table accounts
  add column locale text check (locale in ('en', 'fa', 'fa-AF', 'ps')),
  add column date_of_birth date check (date_of_birth >= date '1900-01-01'),
  add column gender text check (gender in ('female', 'male', 'non-binary', 'prefer-not-to-say', 'self-described')),
  -- Only beside 'self-described': the words the person chose.
  add column gender_description text check (char_length(gender_description) between 1 and 50),
  -- The key of the re-encoded avatar in AVATAR_BUCKET; null: none.
  add column avatar_key text,
  add constraint accounts_gender_description check (gender_description is null or gender = 'self-described');

-- One row per signed upload URL. A row lives at least an hour, claimed or not: the rows of the
-- last hour are the per-account count of upload URLs. The sweep deletes a row an hour old with
-- its staging object (already gone when it was claimed).
create table avatar_uploads (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts (id) on delete cascade,
  staging_key text not null,
  content_type text not null check (content_type in ('image/png', 'image/jpeg', 'image/webp')),
  content_length integer not null check (content_length between 1 and 2097152),
  created_at timestamptz not null default now(),
  -- Set once: a claimed or refused upload is never claimed again.
  settled_at timestamptz
);
create index avatar_uploads_account on avatar_uploads (account_id, created_at);
create index avatar_uploads_created on avatar_uploads (created_at);
