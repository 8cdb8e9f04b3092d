-- Protocol 3 (leases name the commit path, `copy` or `multipart`, and each output's upload key;
-- a multipart `completed` report carries the upload id and part list): agents of protocol 2 can
-- no longer register, so queued jobs of protocol 2 would wait for a Worker that never comes. No
-- Worker holds them yet and their lease is built at dispatch, so they move to 3. Jobs a Worker
-- holds keep their version: they end as the lifecycle says (their Worker is lost).
update jobs set protocol_version = 3 where state = 'QUEUED' and protocol_version = 2;
