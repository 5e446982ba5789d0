<?php

declare(strict_types=1);

/**
 * Test driver (never shipped): a fake FOSSBilling 0.8.5 installation that runs the REAL
 * Servicelicensebridge module the way FOSSBilling does. One php-cli run is one FOSSBilling request,
 * on `php -n -d extension=curl` with PHP's own include_path (nothing sets it).
 *
 *   LB_FB_ROOT=<dir> php standin.php install '<options json>'
 *       lays out <dir> as a FOSSBilling root from ./fossbilling (load.php, di.php, vendor/, library/,
 *       the stand-in core modules), then uploads the module as an operator does:
 *       integrations/fossbilling/src/modules/Servicelicensebridge/ copied to modules/Servicelicensebridge/.
 *       Seeds two clients and the products of the tests. options: legacy_plugin (also put the old
 *       Servicecustom plug-in's file at library/Plugin/LicenseBridge/LicenseBridge.php).
 *   LB_FB_ROOT=<dir> php standin.php admin <module>_<method> '<json>'        an admin API call
 *   LB_FB_ROOT=<dir> php standin.php client <client id> <module>_<method> '<json>'
 *   LB_FB_ROOT=<dir> php standin.php checkout <client id> <product id> '<json>'   the order form, then checkout
 *   LB_FB_ROOT=<dir> php standin.php invoice <order id> activate|renew       a paid invoice's task
 *   LB_FB_ROOT=<dir> php standin.php template client|admin <name>            where Twig finds a template
 *   LB_FB_ROOT=<dir> php standin.php seed-legacy-order '{"ip": ...}'          an order the old plug-in activated
 * LB_FB_CWD=<dir> runs the request from that working directory (cron runs from anywhere).
 *
 * Prints JSON: `api` (the HTTP status and body FOSSBilling's API would answer), `uncaught` (an
 * \Error FOSSBilling's handlers do not catch: the request dies on the error page), `result`, the
 * order, its service_licensebridge row, its status notes, include_path, and what the order
 * e-mails were given.
 */

$root = getenv('LB_FB_ROOT') ?: '';
if ($root === '') {
    fwrite(STDERR, "LB_FB_ROOT is not set\n");
    exit(2);
}
$command = $argv[1] ?? '';

if ($command === 'install') {
    install($root, json_decode($argv[2] ?? '{}', true, 512, JSON_THROW_ON_ERROR));
    echo json_encode(['installed' => $root]), "\n";
    exit(0);
}

$cwd = getenv('LB_FB_CWD');
chdir($cwd !== false && $cwd !== '' ? $cwd : $root);
$di = require $root . '/load.php';
$di['db']; // opens the stand-in's database

$out = ['api' => null, 'uncaught' => null, 'result' => null];
$orderId = null;
try {
    switch ($command) {
        case 'admin':
            $data = json_decode($argv[3] ?? '{}', true, 512, JSON_THROW_ON_ERROR);
            $orderId = $data['order_id'] ?? (str_starts_with($argv[2], 'order_') ? ($data['id'] ?? null) : null);
            $admin = (new RedBeanPHP\OODBBean('admin', ['id' => '1', 'role' => 'admin', 'email' => 'admin@example.com']))->box();
            $out['api'] = api(static fn () => $di['api_dispatcher']->dispatch('admin', $admin, $argv[2], $data), $data);
            break;
        case 'client':
            $data = json_decode($argv[4] ?? '{}', true, 512, JSON_THROW_ON_ERROR);
            $orderId = $data['order_id'] ?? $data['id'] ?? null;
            $client = $di['db']->getExistingModelById('Client', (int) $argv[2], 'Client not found');
            $out['api'] = api(static fn () => $di['api_dispatcher']->dispatch('client', $client, $argv[3], $data), $data);
            break;
        case 'checkout':
            $data = json_decode($argv[4] ?? '{}', true, 512, JSON_THROW_ON_ERROR);
            $client = $di['db']->getExistingModelById('Client', (int) $argv[2], 'Client not found');
            $out['api'] = api(static function () use ($di, $client, $argv, $data, &$orderId) {
                $order = $di['mod_service']('cart')->checkout($client, (int) $argv[3], $data);
                $orderId = $order->id;

                return (int) $order->id;
            }, $data);
            break;
        case 'invoice':
            $orderId = (int) $argv[2];
            $di['mod_service']('invoice', 'InvoiceItem')->executeTask($orderId, $argv[3]);
            break;
        case 'seed-legacy-order':
            // An order the old Servicecustom plug-in activated (where PHP's include_path let it):
            // a Custom product's order, active, whose ServiceCustom names the plug-in.
            $data = json_decode($argv[2] ?? '{}', true, 512, JSON_THROW_ON_ERROR);
            $db = $di['db'];
            $config = json_encode(['period' => '1M', 'ip' => $data['ip']]);
            $custom = $db->dispense('ServiceCustom');
            $custom->client_id = 1;
            $custom->plugin = 'LicenseBridge';
            $custom->plugin_config = null;
            $custom->config = $config;
            $db->store($custom);
            $order = $db->dispense('ClientOrder');
            $order->client_id = 1;
            $order->product_id = 20;
            $order->title = 'Licence by the old plug-in';
            $order->service_type = 'custom';
            $order->service_id = $custom->id;
            $order->period = '1M';
            $order->status = 'active';
            $order->config = $config;
            $order->expires_at = date('Y-m-d H:i:s', strtotime('+1 month'));
            $db->store($order);
            $orderId = $order->id;
            $out['result'] = (int) $order->id;
            break;
        case 'template':
            $out['result'] = $di['mod_service']('theme')->findTemplate($argv[2] === 'client', $argv[2] === 'client' ? 'huraga' : 'admin_default', $argv[3]);
            if (is_string($out['result'])) {
                $out['result'] = substr($out['result'], strlen($root) + 1);
            }
            break;
        default:
            throw new LogicException("unknown command {$command}");
    }
} catch (\Throwable $e) {
    // FOSSBilling's global handler (load.php exceptionHandler) logs it; the visitor gets the error page.
    error_log("{$e->getMessage()} at {$e->getFile()} : {$e->getLine()}");
    $out['uncaught'] = ['class' => get_class($e), 'message' => $e->getMessage()];
} finally {
    Box_Database::save();
}

$state = Box_Database::state();
$order = $orderId !== null ? ($state['rows']['client_order'][(string) $orderId] ?? null) : null;
$out['order'] = $order;
$out['service'] = null;
foreach ($state['rows']['service_licensebridge'] ?? [] as $row) {
    if ($orderId !== null && (string) $row['order_id'] === (string) $orderId) {
        $out['service'] = $row;
    }
}
$out['history'] = array_values(array_map(
    static fn ($h) => ['status' => $h['status'], 'notes' => $h['notes']],
    array_filter($state['rows']['client_order_status'] ?? [], static fn ($h) => (string) $h['client_order_id'] === (string) $orderId),
));
$out['include_path'] = get_include_path();
$out['emails'] = Box\Mod\Order\Service::$emails;
echo json_encode($out, JSON_UNESCAPED_SLASHES), "\n";

/**
 * The API controller (src/modules/Api/Controller/Client.php tryCall, FOSSBilling 0.8.5): CSRFToken
 * is removed from the parameters; a result is {"result": ..., "error": null}; any \Exception becomes
 * {"result": null, "error": {"message", "code" (0 -> 9999)}} with the HTTP status of
 * Http/ApiResponseFactory (L50-70); an \Error is not caught.
 */
function api(callable $call, array &$data): array
{
    unset($data['CSRFToken']);
    try {
        return ['http' => 200, 'body' => ['result' => $call(), 'error' => null]];
    } catch (\Exception $e) {
        $code = $e->getCode() ?: 9999;
        $http = match (true) {
            in_array($code, [201, 202, 203, 204, 205, 206, 1002, 1004], true) => 401,
            $code === 403 => 403,
            $code === 740 => 404,
            $code === 429 => 429,
            $code === 503 => 503,
            in_array($code, [701, 879], true) => 400,
            default => 200,
        };

        return ['http' => $http, 'body' => ['result' => null, 'error' => ['message' => $e->getMessage(), 'code' => $code]], 'class' => get_class($e)];
    }
}

function install(string $root, array $options): void
{
    copyTree(__DIR__ . '/fossbilling', $root);
    // The operator's upload: the module's folder into modules/ (README, "Install").
    copyTree(dirname(__DIR__) . '/src/modules/Servicelicensebridge', $root . '/modules/Servicelicensebridge');
    @mkdir($root . '/themes/huraga/html', 0o755, true);
    @mkdir($root . '/themes/admin_default/html', 0o755, true);

    if (!empty($options['legacy_plugin'])) {
        // The old Servicecustom plug-in's place and class; were it ever loaded, it would say so.
        @mkdir($root . '/library/Plugin/LicenseBridge', 0o755, true);
        file_put_contents($root . '/library/Plugin/LicenseBridge/LicenseBridge.php', "<?php\n\nfinal class LicenseBridge\n{\n    public function __construct(\$config = [])\n    {\n    }\n\n    public function activate(\$data, \$order_data, \$params = [])\n    {\n        file_put_contents(PATH_ROOT . '/legacy-plugin-ran', 'activate');\n    }\n}\n");
    }

    $client = static fn (int $id, string $email, string $first, string $last, ?string $company = null) => [
        'id' => (string) $id, 'email' => $email, 'first_name' => $first, 'last_name' => $last, 'company' => $company,
        'status' => 'active', 'currency' => 'USD', 'created_at' => date('Y-m-d H:i:s'),
    ];
    $recurrent = json_encode(['1M', '3M', '6M', '1Y', '2Y', '3Y', '1W']);
    $product = static fn (int $id, string $title, string $type, ?string $plugin = null) => [
        'id' => (string) $id, 'title' => $title, 'type' => $type, 'setup' => 'after_payment', 'config' => null,
        'plugin' => $plugin, 'plugin_config' => null, 'periods' => $recurrent,
    ];
    // The tables FOSSBilling's installer creates (any column); a module's own come from its install().
    $tables = array_fill_keys(['client', 'admin', 'client_order', 'client_order_status', 'product', 'extension', 'extension_meta', 'service_custom'], null);
    $state = [
        'tables' => $tables,
        'rows' => [
            'client' => ['1' => $client(1, 'ann@example.com', 'Ann', 'Example'), '2' => $client(2, 'bob@example.com', 'Bob', 'Other')],
            'product' => [
                '5' => $product(5, 'cPanel licence', 'licensebridge'),
                '6' => $product(6, 'LiteSpeed licence', 'licensebridge'),
                '9' => $product(9, 'Licence nobody set up', 'licensebridge'),
                '20' => $product(20, 'Licence by the old plug-in', 'custom', 'LicenseBridge'),
                '21' => $product(21, 'Licence by a mistyped plug-in name', 'custom', 'LicenceBridge'),
            ],
        ],
        'seq' => ['client' => 2, 'product' => 21],
    ];
    file_put_contents($root . '/state.json', json_encode($state, JSON_PRETTY_PRINT));
}

function copyTree(string $from, string $to): void
{
    @mkdir($to, 0o755, true);
    foreach (scandir($from) as $entry) {
        if ($entry === '.' || $entry === '..') {
            continue;
        }
        is_dir("{$from}/{$entry}") ? copyTree("{$from}/{$entry}", "{$to}/{$entry}") : copy("{$from}/{$entry}", "{$to}/{$entry}");
    }
}
