-- Protocol 2 (command envelope ids are UUIDs, leases carry a validated plan): agents of protocol
-- 1 can no longer register, so queued jobs of protocol 1 would wait for a Worker that never
-- comes. No Worker holds them yet and their lease is built at dispatch, so they move to 2. Jobs
-- a Worker holds keep their version: they end as the lifecycle says (their Worker is lost).
update jobs set protocol_version = 2 where state = 'QUEUED' and protocol_version = 1;
