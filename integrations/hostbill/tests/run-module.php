<?php
/**
 * Runs the License Bridge HostBill module once, the way HostBill does, and prints what HostBill
 * would see as JSON. Usage:
 *
 *   HB_SCENARIO='{"server":{...},"account":{...},...}' php run-module.php <command>
 *
 * <command>: describe | testConnection | Create | Suspend | Unsuspend | Terminate | Renewal |
 * ChangePackage | widget (the "License & IP" client function) | accountdetails (the client-area
 * controller).
 *
 * The scenario holds what HostBill keeps: `server` (the App's fields, passed to connect()),
 * `account` ($account_details), `client` ($client_data), `product` ($product_details), `options`
 * (the product's module settings by key), `details` (the account's saved fields by key),
 * `account_config` (form fields by variable) and, for the widget, `post` (a form POST).
 *
 * Output: returned (the method's return value), errors / infos (addError / addInfo), details (the
 * account fields HostBill saves afterwards), logs (hbm_log_* lines), warnings (PHP notices and
 * warnings, which must stay empty), threw (an exception that escaped into HostBill: must be null),
 * and for the client area the template and its variables.
 */

require __DIR__ . '/hostbill-stub.php';

$warnings = [];
set_error_handler(function (int $no, string $message, string $file, int $line) use (&$warnings): bool {
    $warnings[] = $message . ' at ' . basename($file) . ':' . $line;
    return true;
});

$command = $argv[1] ?? 'describe';
$scenario = json_decode(getenv('HB_SCENARIO') ?: '{}', true);
if (!is_array($scenario)) {
    fwrite(STDERR, "HB_SCENARIO is not a JSON object\n");
    exit(2);
}

// HostBill finds a provisioning module by its name: includes/modules/Hosting/<name>/class.<name>.php.
$name = 'license_bridge';
$dir = APPDIR_MODULES . 'Hosting' . DS . $name . DS;
require_once $dir . 'class.' . $name . '.php';
$module = new $name();
$module->hbLoad($scenario);

$out = ['command' => $command, 'returned' => null, 'threw' => null];
try {
    if ($command === 'describe') {
        $out['returned'] = $module->hbDescribe();
    } else {
        // "HostBill will call this method before calling any other function from your module."
        $module->connect($scenario['server'] ?? []);
        switch ($command) {
            case 'testConnection':
            case 'Create':
            case 'Suspend':
            case 'Unsuspend':
            case 'Terminate':
            case 'Renewal':
            case 'ChangePackage':
                $out['returned'] = $module->$command();
                break;
            case 'widget':
                $widgetName = 'lblicence';
                require_once $dir . 'widgets' . DS . $widgetName . DS . 'widget.' . $widgetName . '.php';
                $class = 'widget_' . $widgetName;
                $widget = new $class();
                if (isset($scenario['post'])) {
                    $_SERVER['REQUEST_METHOD'] = 'POST';
                    $_POST = $scenario['post'];
                } else {
                    $_SERVER['REQUEST_METHOD'] = 'GET';
                    $_POST = [];
                }
                $result = $widget->clientFunction($module);
                $out['returned'] = $result;
                $template = is_array($result) ? $dir . 'widgets' . DS . $widgetName . DS . (string) ($result[0] ?? '') : null;
                $out['widget'] = [
                    'describe' => $widget->hbDescribe(),
                    'template_exists' => $template !== null && is_file($template),
                    'template_vars' => $template !== null && is_file($template) ? templateVars($template) : [],
                    'template_source' => $template !== null && is_file($template) ? file_get_contents($template) : '',
                ];
                break;
            case 'accountdetails':
                require_once $dir . 'user' . DS . 'class.' . $name . '_controller.php';
                $class = $name . '_controller';
                $controller = new $class();
                $controller->module = $module;
                $controller->template = new HBStubTemplate();
                $controller->accountdetails(['account' => $scenario['account'] ?? []]);
                $rendered = $controller->template->rendered;
                $out['controller'] = [
                    'assigned' => $controller->template->assigned,
                    'rendered' => $rendered,
                    'template_exists' => count($rendered) === 1 && is_file($rendered[0]),
                    'template_vars' => count($rendered) === 1 && is_file($rendered[0]) ? templateVars($rendered[0]) : [],
                ];
                break;
            default:
                fwrite(STDERR, "unknown command $command\n");
                exit(2);
        }
    }
} catch (\Throwable $e) {
    $out['threw'] = get_class($e) . ': ' . $e->getMessage();
}

$out['errors'] = $module->hbErrors();
$out['infos'] = $module->hbInfos();
$out['details'] = $module->hbDetails();
$out['logs'] = $GLOBALS['hb_stub_log'];
$out['warnings'] = $warnings;
echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_PRETTY_PRINT), "\n";

/** The top-level Smarty variables a template reads ({$name...}). */
function templateVars(string $path): array
{
    preg_match_all('/\$([A-Za-z_][A-Za-z0-9_]*)/', (string) file_get_contents($path), $m);
    return array_values(array_unique($m[1]));
}
