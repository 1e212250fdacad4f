"""Scheduled jobs: APScheduler ticks, the database decides who does what.

Adding a job (e.g. push-relay delivery):

1. Keep its work in a table with a due time and a lease pair (owner, until), and describe them
   with `LeaseColumns` (`registry.jobs.leases`).
2. Write a service with the three `LeasedWork` methods: `claim(owner, limit)` leases due rows
   (`LeaseColumns.claim`) in one short transaction; `perform(item)` does the network I/O with no
   transaction open and returns failures as outcomes; `record(owner, outcomes)` writes, in one
   transaction, only what `LeaseColumns.hold` says the owner still leases, sets the next due
   time and releases the lease. Inject the clock, the randomness and the HTTP client.
3. Append `LeasedJob("name", every, service, batch=...)` to `scheduled_jobs` in
   `registry/schedule.py` (or a `PeriodicJob` for a function of time such as pruning).
4. Test it by calling `job.run(ctx)` twice with a fake clock: the second run must do nothing.

The worker (`registry.jobs.worker.Worker`) gives every run the same lease owner id and one
bounded thread pool, so all jobs together make at most `AGENTDEX_WORKER_THREADS` outbound calls
at once.
"""

from registry.jobs.base import Job, JobContext, JobReport, LeasedJob, LeasedWork, PeriodicJob
from registry.jobs.leases import LeaseColumns

__all__ = ["Job", "JobContext", "JobReport", "LeaseColumns", "LeasedJob", "LeasedWork", "PeriodicJob"]
