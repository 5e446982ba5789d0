-- PostgreSQL translation of migrations/sqlite/009_retention.sql.
-- Retention (RETENTION_DAYS): the daily prune finds what is old enough through these, without
-- reading the tables whole. Partial: an event enters its index once processed and leaves it when
-- its payload is pruned; a mail once sent. Succeeded jobs are found through jobs_runnable.
CREATE INDEX events_prunable ON events (received_at) WHERE outcome IS NOT NULL AND payload <> '{}';
CREATE INDEX mails_prunable ON mails (sent_at) WHERE state = 'sent';
