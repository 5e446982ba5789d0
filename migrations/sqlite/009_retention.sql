-- Retention (RETENTION_DAYS): the daily prune finds what is old enough through these, without
-- reading the tables whole. Both are partial: an event enters its index once processed (its
-- outcome set, by the job that carried it out) and leaves it when its payload is pruned; a mail
-- once sent. So the intake's own writes gain no index entry. Succeeded jobs are found through
-- jobs_runnable (state, run_at): a finished job's run_at is when it finished.
CREATE INDEX events_prunable ON events (received_at) WHERE outcome IS NOT NULL AND payload <> '{}';
CREATE INDEX mails_prunable ON mails (sent_at) WHERE state = 'sent';
