-- Why a job did nothing (e.g. a renewal for a service being terminated): the job succeeded, and
-- this says it was skipped and why. A skipped job also gives up its unique key, so the same work
-- may be queued again once it is due (a suspended service's renewal, after it is unsuspended).
ALTER TABLE jobs ADD COLUMN skipped TEXT;
