"""Scheduled jobs: APScheduler ticks, the database decides who does what.

A new job keeps its work in a table with a due time and a lease pair described by `LeaseColumns`,
and a service with the three `LeasedWork` methods: `claim` leases due rows in one short
transaction, `perform` does the network I/O with no transaction open, `record` writes (in one
transaction, only what `LeaseColumns.hold` says the owner still leases) and releases the lease.
Append `LeasedJob(name, every, service)` to `registry/schedule.py`; test it by running it twice
with a fake clock: the second run must do nothing.
"""

from registry.jobs.base import Job, JobContext, JobReport, LeasedJob, LeasedWork, PeriodicJob
from registry.jobs.leases import LeaseColumns
from registry.jobs.recrawl import CrawlPolicy
from registry.jobs.runs import DatabaseJobRuns, JobRun, last_runs

__all__ = [
    "CrawlPolicy",
    "DatabaseJobRuns",
    "Job",
    "JobContext",
    "JobReport",
    "JobRun",
    "LeaseColumns",
    "LeasedJob",
    "LeasedWork",
    "PeriodicJob",
    "last_runs",
]
