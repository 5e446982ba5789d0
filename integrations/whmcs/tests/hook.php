<?php
/**
 * Runs the sample hook file (includes/hooks/licensebridge_webhook_sample.php) the way WHMCS does:
 * the file is loaded once (its add_hook calls registered), then hook points run with their
 * documented variables. Prints JSON: `registered` (the hook points the file registered),
 * `activity` (its logActivity messages), `api_calls` (its localAPI calls).
 *
 *   LB_HOOK_URL, LB_HOOK_SECRET, LB_HOOK_PRODUCTS   the file's settings (defined as constants first,
 *                                                    as an operator may in configuration.php)
 *   LB_STEPS   JSON list, run in order: {"api": {...}} sets localAPI's data (see whmcs-standin.php);
 *              {"hook": "AfterModuleCreate", "vars": {...}} runs a hook point
 */

require __DIR__ . '/whmcs-standin.php';

foreach (['URL' => 'LB_HOOK_URL', 'SECRET' => 'LB_HOOK_SECRET', 'PRODUCTS' => 'LB_HOOK_PRODUCTS'] as $setting => $env) {
    if (getenv($env) !== false) {
        define('LICENSEBRIDGE_WEBHOOK_' . $setting, getenv($env));
    }
}

require dirname(__DIR__) . '/includes/hooks/licensebridge_webhook_sample.php';

$GLOBALS['standin_api'] = [];
foreach (json_decode(getenv('LB_STEPS') ?: '[]', true, 512, JSON_THROW_ON_ERROR) as $step) {
    if (isset($step['api'])) {
        $GLOBALS['standin_api'] = $step['api'];
    } else {
        standin_run_hook((string) $step['hook'], $step['vars'] ?? []);
    }
}

echo json_encode([
    'registered' => array_keys($GLOBALS['standin_hooks'] ?? []),
    'activity' => array_values(array_map(
        static fn ($e) => $e['message'],
        array_filter($GLOBALS['standin_log'] ?? [], static fn ($e) => $e['kind'] === 'logActivity')
    )),
    'api_calls' => $GLOBALS['standin_api_calls'] ?? [],
], JSON_UNESCAPED_SLASHES);
