-- PostgreSQL translation of migrations/sqlite/013_job_cancel.sql, which must rebuild the table.
-- An operator may cancel a failed or blocked job (issue 26): a new job state, `cancelled`.
-- The CHECK of 001's column `state` took PostgreSQL's default name, <table>_<column>_check:
-- dropped and made again wider, in the migration's transaction (adding it reads every row once).
ALTER TABLE jobs
  DROP CONSTRAINT jobs_state_check,
  ADD CONSTRAINT jobs_state_check CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'blocked', 'cancelled'));
