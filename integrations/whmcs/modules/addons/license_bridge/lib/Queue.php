<?php
/**
 * The retry table (mod_license_bridge_queue) and the last-known state of each service
 * (mod_license_bridge_state), on a PDO connection: WHMCS's own (Capsule's PDO, MySQL) in
 * production, SQLite in the tests. Only portable SQL here.
 *
 * Every event goes through the queue: it is inserted (webhook-id unique) before it is sent and
 * deleted once the bridge has it, so a crash or an outage between the two loses nothing.
 */

namespace LicenseBridge;

if (!defined('WHMCS')) {
    die('This file cannot be accessed directly');
}

final class Queue
{
    public const TABLE = 'mod_license_bridge_queue';
    public const STATE_TABLE = 'mod_license_bridge_state';

    public const PENDING = 'pending';
    public const FAILED = 'failed';

    /** @var \PDO */
    private $pdo;
    /** @var int */
    private $maxAttempts;

    public function __construct(\PDO $pdo, int $maxAttempts = 2000)
    {
        $this->pdo = $pdo;
        $this->maxAttempts = max(1, $maxAttempts);
    }

    public function maxAttempts(): int
    {
        return $this->maxAttempts;
    }

    /** CREATE TABLE statements for a PDO driver ("mysql" or "sqlite"), when the Capsule schema builder is not there. */
    public static function createTablesSql(string $driver): array
    {
        $sqlite = $driver === 'sqlite';
        $pk = $sqlite ? 'INTEGER PRIMARY KEY AUTOINCREMENT' : 'INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY';
        $tail = $sqlite ? '' : ' ENGINE=InnoDB DEFAULT CHARSET=utf8mb4';
        $index = $sqlite ? '' : ', KEY mod_license_bridge_queue_service (service_id, id)';
        $sql = [
            'CREATE TABLE IF NOT EXISTS ' . self::TABLE . " (
                id $pk,
                webhook_id VARCHAR(191) NOT NULL UNIQUE,
                service_id VARCHAR(64) NOT NULL,
                event_type VARCHAR(40) NOT NULL,
                payload TEXT NOT NULL,
                status VARCHAR(16) NOT NULL DEFAULT 'pending',
                attempts INT NOT NULL DEFAULT 0,
                last_status INT NULL,
                last_error VARCHAR(255) NULL,
                created_at INT NOT NULL,
                updated_at INT NOT NULL$index
            )$tail",
            'CREATE TABLE IF NOT EXISTS ' . self::STATE_TABLE . " (
                service_id VARCHAR(64) NOT NULL PRIMARY KEY,
                ip VARCHAR(64) NULL,
                pid VARCHAR(32) NULL,
                status VARCHAR(16) NULL,
                status_seq INT NOT NULL DEFAULT 0,
                pid_seq INT NOT NULL DEFAULT 0,
                ip_seq INT NOT NULL DEFAULT 0,
                updated_at INT NOT NULL
            )$tail",
        ];
        if ($sqlite) {
            $sql[] = 'CREATE INDEX IF NOT EXISTS mod_license_bridge_queue_service ON ' . self::TABLE . ' (service_id, id)';
        }
        return $sql;
    }

    private function run(string $sql, array $args = []): \PDOStatement
    {
        $stmt = $this->pdo->prepare($sql);
        if ($stmt === false || $stmt->execute($args) === false) {
            $info = $stmt ? $stmt->errorInfo() : $this->pdo->errorInfo();
            throw new \RuntimeException('database error: ' . ($info[2] ?? 'unknown'));
        }
        return $stmt;
    }

    /**
     * Stores an event unless one with its webhook-id is already there.
     *
     * @return bool true if stored now, false if it was already queued (or given up)
     */
    public function enqueue(array $event, string $body): bool
    {
        if ($this->find($event['webhook_id']) !== null) {
            return false;
        }
        $now = time();
        try {
            $this->run(
                'INSERT INTO ' . self::TABLE . ' (webhook_id, service_id, event_type, payload, status, attempts, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?)',
                [$event['webhook_id'], $event['service_id'], $event['type'], $body, self::PENDING, $now, $now]
            );
        } catch (\PDOException $e) {
            if ((string) $e->getCode() === '23000') {
                return false; // inserted concurrently by another request
            }
            throw $e;
        }
        return true;
    }

    public function find(string $webhookId): ?array
    {
        $row = $this->run('SELECT * FROM ' . self::TABLE . ' WHERE webhook_id = ?', [$webhookId])->fetch(\PDO::FETCH_ASSOC);
        return $row ? $row : null;
    }

    /** Rows in one status, oldest first; optionally of one service. */
    public function rows(string $status = self::PENDING, ?string $serviceId = null, int $limit = 100): array
    {
        $sql = 'SELECT * FROM ' . self::TABLE . ' WHERE status = ?';
        $args = [$status];
        if ($serviceId !== null) {
            $sql .= ' AND service_id = ?';
            $args[] = $serviceId;
        }
        $sql .= ' ORDER BY id LIMIT ' . max(1, (int) $limit);
        return $this->run($sql, $args)->fetchAll(\PDO::FETCH_ASSOC);
    }

    public function count(string $status = self::PENDING): int
    {
        return (int) $this->run('SELECT COUNT(*) FROM ' . self::TABLE . ' WHERE status = ?', [$status])->fetchColumn();
    }

    public function delete(int $id): void
    {
        $this->run('DELETE FROM ' . self::TABLE . ' WHERE id = ?', [$id]);
    }

    /** One more failed attempt; past the cap the row is given up. Returns the row's new status. */
    public function attemptFailed(int $id, int $attempts, int $httpStatus, string $error, bool $giveUp): string
    {
        $attempts++;
        $status = ($giveUp || $attempts >= $this->maxAttempts) ? self::FAILED : self::PENDING;
        $this->run(
            'UPDATE ' . self::TABLE . ' SET attempts = ?, status = ?, last_status = ?, last_error = ?, updated_at = ? WHERE id = ?',
            [$attempts, $status, $httpStatus ?: null, EventBuilder::clip($error, 250), time(), $id]
        );
        return $status;
    }

    /** Puts given-up rows (all, or one) back in the queue with a fresh attempt count. */
    public function requeue(?int $id = null): int
    {
        $sql = 'UPDATE ' . self::TABLE . ' SET status = ?, attempts = 0, updated_at = ? WHERE status = ?';
        $args = [self::PENDING, time(), self::FAILED];
        if ($id !== null) {
            $sql .= ' AND id = ?';
            $args[] = $id;
        }
        return $this->run($sql, $args)->rowCount();
    }

    /**
     * Sends pending rows, oldest first. A service whose row must be retried is blocked for the
     * rest of the pass, so its later events never overtake it (the bridge applies a service's
     * events in the order it receives them).
     *
     * @param callable $send   fn(array $row): array{outcome:string,status:int,error:?string,response:string}
     * @param int|null $until  stop taking new rows after this Unix time
     * @return array[] one entry per attempt: webhook_id, service_id, event_type, status, outcome, row_status
     */
    public function drain(callable $send, ?string $serviceId = null, int $limit = 100, ?int $until = null): array
    {
        $done = [];
        $blocked = [];
        foreach ($this->rows(self::PENDING, $serviceId, $limit) as $row) {
            if (isset($blocked[$row['service_id']])) {
                continue;
            }
            if ($until !== null && time() >= $until) {
                break;
            }
            $r = $send($row);
            $entry = [
                'webhook_id' => $row['webhook_id'],
                'service_id' => $row['service_id'],
                'event_type' => $row['event_type'],
                'status' => $r['status'],
                'outcome' => $r['outcome'],
                'attempts' => (int) $row['attempts'] + 1,
            ];
            if ($r['outcome'] === Sender::DELIVERED) {
                $this->delete((int) $row['id']);
                $entry['row_status'] = 'deleted';
            } else {
                $error = $r['error'] ?? ('HTTP ' . $r['status'] . ' ' . $r['response']);
                $entry['row_status'] = $this->attemptFailed((int) $row['id'], (int) $row['attempts'], (int) $r['status'], $error, $r['outcome'] === Sender::GIVE_UP);
                $entry['error'] = $error;
                if ($r['outcome'] === Sender::RETRY) {
                    $blocked[$row['service_id']] = true;
                }
            }
            $done[] = $entry;
        }
        return $done;
    }

    public function state(string $serviceId): ?array
    {
        $row = $this->run('SELECT * FROM ' . self::STATE_TABLE . ' WHERE service_id = ?', [$serviceId])->fetch(\PDO::FETCH_ASSOC);
        if (!$row) {
            return null;
        }
        foreach (['status_seq', 'pid_seq', 'ip_seq'] as $k) {
            $row[$k] = (int) $row[$k];
        }
        return $row;
    }

    public function putState(string $serviceId, array $state): void
    {
        $vals = [
            $state['ip'] ?? null,
            isset($state['pid']) ? (string) $state['pid'] : null,
            $state['status'] ?? null,
            (int) ($state['status_seq'] ?? 0),
            (int) ($state['pid_seq'] ?? 0),
            (int) ($state['ip_seq'] ?? 0),
            time(),
        ];
        if ($this->state($serviceId) === null) {
            try {
                $this->run(
                    'INSERT INTO ' . self::STATE_TABLE . ' (ip, pid, status, status_seq, pid_seq, ip_seq, updated_at, service_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
                    array_merge($vals, [$serviceId])
                );
                return;
            } catch (\PDOException $e) {
                if ((string) $e->getCode() !== '23000') {
                    throw $e;
                }
            }
        }
        $this->run(
            'UPDATE ' . self::STATE_TABLE . ' SET ip = ?, pid = ?, status = ?, status_seq = ?, pid_seq = ?, ip_seq = ?, updated_at = ? WHERE service_id = ?',
            array_merge($vals, [$serviceId])
        );
    }
}
