<?php

declare(strict_types=1);

use RedBeanPHP\OODBBean;
use RedBeanPHP\RedException\SQL;
use RedBeanPHP\SimpleModel;

/**
 * STAND-IN (test only) for src/library/Box/Database.php of FOSSBilling 0.8.5 ($di['db']) over a
 * FROZEN RedBean (di.php L123-157: `$mapper->freeze(Config db.freeze, default true)`), kept in
 * PATH_ROOT/state.json between requests (one php-cli run is one request).
 *
 * What it imitates:
 *  - model names: "ClientOrder" is the table client_order and comes back boxed (Model_ClientOrder);
 *    a lower-case name ("client_order", "service_licensebridge") is the table itself and comes back
 *    as a plain bean (_getTypeFromModelName, dispense/findOne/load);
 *  - load() of a missing row: a bean with id 0 for a table name, null for a model name;
 *  - frozen schema: a query on a table that does not exist, or a store() of a column the table
 *    does not have, is RedBean's SQL exception, as MySQL's "Base table or view not found" /
 *    "Unknown column" would be. The tables FOSSBilling creates at install are there from the
 *    start (any column); a module's own table exists once its CREATE TABLE ran (exec), with the
 *    columns it names;
 *  - values read back are strings or null (PDO).
 * WHERE clauses: only what the code under test sends: `col = ?` / `col = :name` joined by AND.
 */
class Box_Database
{
    private static ?array $state = null;
    private static string $file = '';

    public static function open(string $file): void
    {
        self::$file = $file;
        $json = @file_get_contents($file);
        self::$state = $json === false ? [] : json_decode($json, true, 512, JSON_THROW_ON_ERROR);
        self::$state += ['tables' => [], 'rows' => [], 'seq' => []];
    }

    public static function save(): void
    {
        if (self::$state !== null) {
            file_put_contents(self::$file, json_encode(self::$state, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES));
        }
    }

    /** The raw state, for the test driver's output. */
    public static function &state(): array
    {
        return self::$state;
    }

    public function dispense(string $modelName): object
    {
        $type = $this->typeOf($modelName);
        $this->assertTable($type);
        $bean = new OODBBean($type, ['id' => 0]);

        return $type === $modelName ? $bean : $bean->box();
    }

    public function store(object $modelOrBean): int
    {
        $bean = $modelOrBean instanceof SimpleModel ? $modelOrBean->unbox() : $modelOrBean;
        $type = $bean->getMeta('type');
        $this->assertTable($type);
        $row = $bean->export();
        $columns = self::$state['tables'][$type];
        if (is_array($columns)) {
            foreach (array_keys($row) as $column) {
                if (!in_array($column, $columns, true)) {
                    throw new SQL("SQLSTATE[42S22]: Column not found: 1054 Unknown column '{$column}' in 'field list'");
                }
            }
        }
        $id = (int) ($row['id'] ?? 0);
        if ($id === 0) {
            $id = self::$state['seq'][$type] = (self::$state['seq'][$type] ?? 0) + 1;
            $bean->id = $id;
            $row['id'] = $id;
        }
        self::$state['rows'][$type][(string) $id] = array_map(static fn ($v) => $v === null ? null : (is_bool($v) ? ($v ? '1' : '0') : (string) $v), $row);

        return $id;
    }

    public function load(string $modelName, $id): ?object
    {
        $type = $this->typeOf($modelName);
        $this->assertTable($type);
        $row = self::$state['rows'][$type][(string) (int) $id] ?? null;
        if ($type === $modelName) {
            return new OODBBean($type, $row ?? ['id' => 0]);
        }

        return $row === null ? null : (new OODBBean($type, $row))->box();
    }

    public function findOne(string $modelName, ?string $sql = null, array $values = []): ?object
    {
        $found = $this->find($modelName, $sql, $values);

        return $found === [] ? null : reset($found);
    }

    public function find(string $modelName, ?string $sql = null, array $values = []): array
    {
        $type = $this->typeOf($modelName);
        $this->assertTable($type);
        $conditions = $this->where((string) $sql, $values);
        $out = [];
        foreach (self::$state['rows'][$type] ?? [] as $row) {
            foreach ($conditions as $column => $value) {
                if ((string) ($row[$column] ?? '') !== (string) $value) {
                    continue 2;
                }
            }
            $bean = new OODBBean($type, $row);
            $out[] = $type === $modelName ? $bean : $bean->box();
        }

        return $out;
    }

    public function trash(object $modelOrBean): void
    {
        $bean = $modelOrBean instanceof SimpleModel ? $modelOrBean->unbox() : $modelOrBean;
        unset(self::$state['rows'][$bean->getMeta('type')][(string) $bean->id]);
    }

    public function getExistingModelById(string $modelName, $id, string $message = 'Model :name not found in the database'): object
    {
        $model = $this->load($modelName, (int) $id);
        if ($model === null) {
            throw new FOSSBilling\Exception($message, [':name' => $modelName]);
        }

        return $model;
    }

    /** The DDL a module's install() runs; nothing else is imitated. */
    public function exec(string $sql, array $values = []): int
    {
        if (preg_match('/^\s*CREATE TABLE IF NOT EXISTS `(\w+)` \((.*)\)[^)]*;?\s*$/is', $sql, $m) === 1) {
            preg_match_all('/^\s*`(\w+)`\s+\w/m', $m[2], $cols);
            if (!array_key_exists($m[1], self::$state['tables'])) {
                self::$state['tables'][$m[1]] = $cols[1];
            }

            return 0;
        }
        if (preg_match('/^\s*DROP TABLE IF EXISTS `(\w+)`;?\s*$/i', $sql, $m) === 1) {
            unset(self::$state['tables'][$m[1]], self::$state['rows'][$m[1]]);

            return 0;
        }
        throw new LogicException('the stand-in database does not imitate: ' . $sql);
    }

    /** Box_Database::_getTypeFromModelName. */
    private function typeOf(string $modelName): string
    {
        if ($modelName === strtolower($modelName)) {
            return $modelName;
        }
        preg_match_all('!([A-Z][A-Z0-9]*(?=$|[A-Z][a-z0-9])|[A-Za-z][a-z0-9]+)!', $modelName, $matches);
        $parts = array_map(static fn ($p) => $p === strtoupper($p) ? strtolower($p) : lcfirst($p), $matches[0]);

        return implode('_', $parts);
    }

    private function assertTable(string $type): void
    {
        if (!array_key_exists($type, self::$state['tables'])) {
            throw new SQL("SQLSTATE[42S02]: Base table or view not found: 1146 Table 'fossbilling.{$type}' doesn't exist");
        }
    }

    /** @return array<string, mixed> column => value */
    private function where(string $sql, array $values): array
    {
        $sql = trim((string) preg_replace('/\s+ORDER BY .*$/is', '', $sql));
        if ($sql === '') {
            return [];
        }
        $out = [];
        $positional = 0;
        foreach (preg_split('/\s+AND\s+/i', $sql) as $part) {
            if (preg_match('/^(\w+)\s*=\s*(\?|:\w+)$/', trim($part), $m) !== 1) {
                throw new LogicException('the stand-in database does not imitate: ' . $sql);
            }
            $out[$m[1]] = $m[2] === '?' ? $values[$positional++] : ($values[$m[2]] ?? $values[substr($m[2], 1)] ?? null);
        }

        return $out;
    }
}
