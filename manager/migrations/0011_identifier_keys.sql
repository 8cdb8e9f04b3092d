-- One spelling of an identifier (docs/identifiers.md): accounts are unique by email_key, the
-- address keyed by TJM's code (manager/src/identity/identifiers.ts: NFKC, case folded), never by
-- PostgreSQL's lower(), which folds differently from the code that counts sign-in failures.
-- The step 0011_identifier_keys.ts ran first in this transaction: it keyed every stored
-- account into identifier_keys, or refused (listing the accounts whose addresses become one).
alter table accounts add column email_key text check (char_length(email_key) between 1 and 254);
update accounts a set email_key = k.email_key from identifier_keys k where k.account_id = a.id;
alter table accounts alter column email_key set not null;
-- A row inserted by hand, without a key, gets one that no spelling has (U+0001 is a control
-- character, which the key function refuses): that account is found by no address, never by
-- the wrong one.
alter table accounts alter column email_key set default chr(1) || gen_random_uuid()::text;
drop index accounts_email_key;
alter table accounts add constraint accounts_email_key unique (email_key);
drop table identifier_keys;
