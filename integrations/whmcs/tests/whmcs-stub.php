<?php
/**
 * Stand-ins for the WHMCS functions the module calls, for the tests. Load this first: the
 * module's lib/Whmcs.php then keeps these definitions instead of its Capsule-based ones.
 *
 * Everything comes from the JSON fixture named by the LB_STUB_FIXTURE environment variable:
 *   {
 *     "settings": {"bridge_url": "...", "signing_secret": "whsec_...", "product_ids": "", "timeout": "5"},
 *     "services": {"4711": {"serviceid": "4711", "pid": "12", "billingcycle": "Monthly", "nextduedate": "2026-07-01",
 *                           "dedicatedip": "203.0.113.10", "status": "Active", "email": "...", "firstname": "...", "lastname": "..."}},
 *     "invoices": {"9001": ["4711"]},
 *     "db": "/tmp/x/whmcs.sqlite",      (the queue and state tables, SQLite via PDO)
 *     "log": "/tmp/x/module-log.jsonl"  (logModuleCall and logActivity, one JSON object a line)
 *   }
 */

if (!defined('WHMCS')) {
    define('WHMCS', true);
}

error_reporting(E_ALL);
// Warnings, notices and deprecations go to stderr, where the tests look for them.
set_error_handler(function ($no, $str, $file, $line) {
    fwrite(STDERR, "PHP error $no: $str at $file:$line\n");
    return true;
});

$GLOBALS['lb_stub_hooks'] = [];

function lb_stub_fixture(): array
{
    static $fixture = null;
    if ($fixture === null) {
        $path = getenv('LB_STUB_FIXTURE');
        if (!$path || !is_file($path)) {
            fwrite(STDERR, "whmcs-stub: set LB_STUB_FIXTURE to a fixture JSON file\n");
            exit(2);
        }
        $fixture = json_decode((string) file_get_contents($path), true, 512, JSON_THROW_ON_ERROR);
    }
    return $fixture;
}

function lb_stub_log(array $entry): void
{
    $path = lb_stub_fixture()['log'] ?? null;
    if ($path) {
        file_put_contents($path, json_encode($entry + ['at' => date('c')], JSON_UNESCAPED_SLASHES) . "\n", FILE_APPEND | LOCK_EX);
    }
}

function add_hook($hookPoint, $priority, $function): void
{
    $GLOBALS['lb_stub_hooks'][$hookPoint][] = [(int) $priority, $function];
}

/** Runs the callbacks of one hook point, lowest priority first, as WHMCS's run_hook does. */
function lb_stub_run_hook(string $hookPoint, array $vars): int
{
    $hooks = $GLOBALS['lb_stub_hooks'][$hookPoint] ?? [];
    usort($hooks, function ($a, $b) {
        return $a[0] <=> $b[0];
    });
    foreach ($hooks as [, $fn]) {
        $fn($vars);
    }
    return count($hooks);
}

/** Like WHMCS, minus the masking of $replaceVars: the module must scrub by itself, and the tests check it does. */
function logModuleCall($module, $action, $requestString, $responseData, $processedData = '', $replaceVars = []): void
{
    lb_stub_log(['log' => 'module', 'module' => $module, 'action' => $action, 'request' => $requestString, 'response' => $responseData, 'processed' => $processedData]);
}

function logActivity($description, $userId = 0): void
{
    lb_stub_log(['log' => 'activity', 'message' => $description]);
}

function lb_module_setting(string $name): ?string
{
    $v = lb_stub_fixture()['settings'][$name] ?? null;
    return $v === null ? null : (string) $v;
}

function lb_service_lookup(string $serviceId): ?array
{
    return lb_stub_fixture()['services'][$serviceId] ?? null;
}

function lb_invoice_service_ids(string $invoiceId): array
{
    return array_map('strval', lb_stub_fixture()['invoices'][$invoiceId] ?? []);
}

function lb_db(): \PDO
{
    static $pdo = null;
    if ($pdo === null) {
        $pdo = new \PDO('sqlite:' . lb_stub_fixture()['db']);
        $pdo->setAttribute(\PDO::ATTR_ERRMODE, \PDO::ERRMODE_EXCEPTION);
        $pdo->setAttribute(\PDO::ATTR_TIMEOUT, 10);
    }
    return $pdo;
}
