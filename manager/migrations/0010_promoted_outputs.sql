-- The outputs of an accepted completion already copied to their destinations. A promotion cut
-- after some copies (the manifest write failed, the store went away) resumes with the rest
-- instead of writing those destinations a second time.
alter table attempts
  add column promoted_output_ids text[] not null default '{}';
