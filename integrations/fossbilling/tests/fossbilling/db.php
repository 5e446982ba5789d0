<?php

declare(strict_types=1);

/**
 * STAND-IN for FOSSBilling's database (test only): the rows the order and Servicecustom modules
 * read and write, kept in PATH_ROOT/state.json between runs (each php-cli run is one request).
 * Rows come back as RedBean's toArray() gives them: every value a string, or null.
 */
final class StandInDb
{
    private static ?array $state = null;

    public static function &state(): array
    {
        if (self::$state === null) {
            $json = @file_get_contents(PATH_ROOT . '/state.json');
            self::$state = $json === false ? [] : json_decode($json, true, 512, JSON_THROW_ON_ERROR);
            self::$state += ['seq' => [], 'clients' => [], 'products' => [], 'orders' => [], 'services' => [], 'history' => []];
        }
        return self::$state;
    }

    public static function save(): void
    {
        file_put_contents(PATH_ROOT . '/state.json', json_encode(self::state(), JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES));
    }

    public static function nextId(string $table): int
    {
        $state = &self::state();
        $state['seq'][$table] = ($state['seq'][$table] ?? 0) + 1;
        return $state['seq'][$table];
    }

    /** A row as RedBean's toArray() returns it (strings and nulls). */
    public static function row(array $row): array
    {
        return array_map(static fn ($v) => $v === null ? null : (is_bool($v) ? ($v ? '1' : '0') : (string) $v), $row);
    }

    public static function now(): string
    {
        return date('Y-m-d H:i:s');
    }
}
