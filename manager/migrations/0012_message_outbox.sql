-- Messages people receive (e-mail, SMS), written in the transaction of what caused them and
-- sent off the request path by the Manager's message sender: a crash between the commit and
-- the send loses nothing, and a send interrupted by a crash is tried again (at least once).
-- The id is also the e-mail's Message-ID and the SMS webhook's idempotency key, so a receiver
-- recognises a resend.
create table message_outbox (
  id uuid primary key default gen_random_uuid(),
  channel text not null check (channel in ('email', 'sms')),
  -- An e-mail address or an E.164 phone number.
  recipient text not null check (length(recipient) between 3 and 320),
  -- The catalogue the message was rendered from (en, fa, fa-AF, ps).
  locale text not null,
  -- The catalogue key of the message, and the values it was rendered with. A message that
  -- holds a code (holds_code) loses params and body once sent, failed or expired.
  template text not null,
  params jsonb,
  -- { subject?, text, html? } as rendered at enqueue: a resend is the same message.
  body jsonb,
  holds_code boolean not null,
  attempts integer not null default 0,
  -- When the sender may take the row next; a claimed row is pushed past its send timeout, so
  -- a sender that dies mid-send leaves it to be taken again. Null once sent or failed.
  next_attempt_at timestamptz default now(),
  sent_at timestamptz,
  failed_at timestamptz,
  failure_reason text,
  -- A code is useless after this: the row is failed ("expired") instead of sent late.
  expires_at timestamptz,
  created_at timestamptz not null default now(),
  check (sent_at is null or failed_at is null),
  check ((sent_at is null and failed_at is null) = (next_attempt_at is not null)),
  check (not holds_code or sent_at is null and failed_at is null or (params is null and body is null))
);

-- What the sender looks for: rows still to send, earliest first.
create index message_outbox_due on message_outbox (next_attempt_at) where next_attempt_at is not null;
