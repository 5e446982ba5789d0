<?php
/**
 * License Bridge hooks: WHMCS service actions → signed license-bridge webhooks.
 *
 * WHMCS loads this file on every request while the addon is active. It only registers
 * closures; the library is loaded inside each hook's try/catch, so nothing here can break
 * a WHMCS action: an error goes to the module and activity logs, the event to the retry table.
 *
 *   AfterModuleCreate        → service.created
 *   AfterModuleSuspend       → service.suspended
 *   AfterModuleUnsuspend     → service.unsuspended
 *   AfterModuleTerminate     → service.terminated
 *   AfterModuleRenew         → service.renewed (next_due_date = tblhosting.nextduedate)
 *   InvoicePaid              → service.renewed for each renewed "Hosting" item; same webhook-id
 *                              as AfterModuleRenew for the same payment, so the bridge dedups
 *   AfterModuleChangePackage → service.product_changed (changes.product_id = the new pid)
 *   AdminServiceEdit,
 *   ServiceEdit              → service.ip_changed when tblhosting.dedicatedip differs from the
 *                              last IP the module forwarded (mod_license_bridge_state)
 *   AfterCronJob             → sends what the retry table holds
 *   DailyCronJob             → reminds in the activity log of given-up events
 */

if (!defined('WHMCS')) {
    die('This file cannot be accessed directly');
}

if (!function_exists('license_bridge_run_hook')) {
    function license_bridge_run_hook(string $hook, callable $body): void
    {
        try {
            require_once __DIR__ . '/lib/bootstrap.php';
            $body();
        } catch (\Throwable $e) {
            try {
                if (function_exists('lb_report_exception')) {
                    lb_report_exception($hook, $e);
                } elseif (function_exists('logActivity')) {
                    logActivity("License Bridge: $hook failed to load: " . get_class($e));
                }
            } catch (\Throwable $ignored) {
                // logging failed too: still never break the WHMCS action
            }
        }
    }
}

$licenseBridgeModuleHooks = [
    'AfterModuleCreate' => 'create',
    'AfterModuleSuspend' => 'suspend',
    'AfterModuleUnsuspend' => 'unsuspend',
    'AfterModuleTerminate' => 'terminate',
    'AfterModuleRenew' => 'renew',
    'AfterModuleChangePackage' => 'changepackage',
];
foreach ($licenseBridgeModuleHooks as $licenseBridgeHook => $licenseBridgeAction) {
    add_hook($licenseBridgeHook, 1, function ($vars) use ($licenseBridgeHook, $licenseBridgeAction) {
        license_bridge_run_hook($licenseBridgeHook, function () use ($vars, $licenseBridgeHook, $licenseBridgeAction) {
            \LicenseBridge\Bridge::onModuleAction($licenseBridgeAction, $licenseBridgeHook, is_array($vars) ? $vars : []);
        });
    });
}
unset($licenseBridgeModuleHooks, $licenseBridgeHook, $licenseBridgeAction);

add_hook('InvoicePaid', 1, function ($vars) {
    license_bridge_run_hook('InvoicePaid', function () use ($vars) {
        \LicenseBridge\Bridge::onInvoicePaid(is_array($vars) ? $vars : []);
    });
});

foreach (['AdminServiceEdit', 'ServiceEdit'] as $licenseBridgeHook) {
    add_hook($licenseBridgeHook, 1, function ($vars) use ($licenseBridgeHook) {
        license_bridge_run_hook($licenseBridgeHook, function () use ($vars, $licenseBridgeHook) {
            \LicenseBridge\Bridge::onServiceEdit($licenseBridgeHook, is_array($vars) ? $vars : []);
        });
    });
}
unset($licenseBridgeHook);

add_hook('AfterCronJob', 1, function ($vars) {
    license_bridge_run_hook('AfterCronJob', function () {
        \LicenseBridge\Bridge::onCron();
    });
});

add_hook('DailyCronJob', 1, function ($vars) {
    license_bridge_run_hook('DailyCronJob', function () {
        \LicenseBridge\Bridge::onDailyCron();
    });
});
