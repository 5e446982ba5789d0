<?php

declare(strict_types=1);

/**
 * Test driver (never shipped): a fake FOSSBilling installation that runs the REAL LicenseBridge
 * plug-in the way FOSSBilling does. One php-cli run is one FOSSBilling request.
 *
 *   LB_FB_ROOT=<dir> LB_URL=<bridge> LB_TOKEN=<token> php standin.php install '<options json>'
 *       lays out <dir> as a FOSSBilling root: load.php, modules/Order, modules/Servicecustom
 *       (the stand-ins in ./fossbilling), library/FOSSBilling, and library/Plugin/LicenseBridge/
 *       with the plug-in's files as an admin copies them, config.php made from config.example.php.
 *       options: include_path "php_ini" (library/ on include_path, the fix the README gives),
 *       "symlink" (the README's other fix), "none" (a stock PHP); settings: config.php overrides;
 *       config_php: the raw text of config.php instead.
 *   LB_FB_ROOT=<dir> php standin.php checkout '{"client_id":1,"product_id":5,"period":"1M","form":{"ip":"..."}}'
 *   LB_FB_ROOT=<dir> php standin.php admin <module>_<method> '<json>'   e.g. order_activate, servicecustom_changePackage
 *   LB_FB_ROOT=<dir> php standin.php client <client id> servicecustom_call '<json>'
 *   LB_FB_ROOT=<dir> php standin.php invoice <order id> activate|renew
 *
 * Prints JSON: `api` (the HTTP status and body FOSSBilling's API would answer), `uncaught` (an
 * \Error FOSSBilling's handlers do not catch: the request dies on the error page), the order, its
 * status notes, and the plug-in calls made.
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

require $root . '/load.php';

$out = ['api' => null, 'uncaught' => null, 'result' => null];
$orderId = null;
try {
    switch ($command) {
        case 'checkout':
            $order = StandInOrder::checkout(json_decode($argv[2], true, 512, JSON_THROW_ON_ERROR));
            $orderId = $order['id'];
            $out['result'] = $order['id'];
            break;
        case 'admin':
            $data = json_decode($argv[3] ?? '{}', true, 512, JSON_THROW_ON_ERROR);
            $orderId = $data['id'] ?? $data['order_id'] ?? null;
            $out['api'] = api(static function () use ($argv, $data) {
                [$module, $method] = explode('_', $argv[2], 2);
                return $module === 'order' ? StandInOrder::adminApi($method, $data) : StandInServicecustom::adminCall($method, $data);
            }, $data);
            break;
        case 'client':
            $data = json_decode($argv[4] ?? '{}', true, 512, JSON_THROW_ON_ERROR);
            $orderId = $data['order_id'] ?? null;
            if ($argv[3] !== 'servicecustom_call') {
                throw new LogicException('only servicecustom_call is imitated');
            }
            $out['api'] = api(static fn () => StandInServicecustom::clientCall((int) $argv[2], $data), $data);
            break;
        case 'invoice':
            $orderId = $argv[2];
            StandInOrder::invoicePaid(StandInOrder::get($orderId), $argv[3]);
            break;
        default:
            throw new LogicException("unknown command {$command}");
    }
} catch (\Throwable $e) {
    // FOSSBilling's global handler (load.php L161) logs it; the visitor gets the error page.
    error_log("{$e->getMessage()} at {$e->getFile()} : {$e->getLine()}");
    $out['uncaught'] = ['class' => get_class($e), 'message' => $e->getMessage()];
} finally {
    StandInDb::save();
}

$state = StandInDb::state();
$out['order'] = $orderId !== null ? ($state['orders'][(string) $orderId] ?? null) : null;
$out['service'] = $out['order'] !== null && $out['order']['service_id'] !== null ? ($state['services'][(string) $out['order']['service_id']] ?? null) : null;
$out['history'] = array_values(array_filter($state['history'], static fn ($h) => (string) $h['order_id'] === (string) $orderId));
$out['calls'] = StandInTrace::$calls;
echo json_encode($out, JSON_UNESCAPED_SLASHES), "\n";

/**
 * The API controller (modules/Api/Controller/Client.php, FOSSBilling 0.8.5): CSRFToken is removed
 * from the parameters; a result is {"result": ..., "error": null}; any \Exception becomes
 * {"result": null, "error": {"message", "code" (0 -> 9999)}} with the HTTP status of
 * Http/ApiResponseFactory; an \Error is not caught.
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
    $here = __DIR__;
    $module = dirname($here) . '/library/Plugin/LicenseBridge';
    copyTree($here . '/fossbilling', $root);
    @mkdir($root . '/library/Plugin/LicenseBridge', 0o755, true);
    foreach (['LicenseBridge.php', 'LicenseBridgeClient.php'] as $file) {
        copy($module . '/' . $file, $root . '/library/Plugin/LicenseBridge/' . $file);
    }

    if (array_key_exists('config_php', $options)) {
        if ($options['config_php'] !== null) {
            file_put_contents($root . '/library/Plugin/LicenseBridge/config.php', $options['config_php']);
        }
    } else {
        // As the README says: config.example.php copied to config.php and filled in.
        $settings = require $module . '/config.example.php';
        $settings['url'] = getenv('LB_URL') ?: '';
        $settings['token'] = getenv('LB_TOKEN') ?: '';
        $settings['products'] = ['5' => '12', '6' => '13', '7' => '20'];
        $settings = array_replace($settings, $options['settings'] ?? []);
        file_put_contents($root . '/library/Plugin/LicenseBridge/config.php', "<?php\n\nreturn " . var_export($settings, true) . ";\n");
    }

    $mode = $options['include_path'] ?? 'php_ini';
    $php = [];
    if ($mode === 'php_ini') {
        $php['include_path'] = '.' . PATH_SEPARATOR . '/usr/share/php' . PATH_SEPARATOR . $root . '/library';
    } elseif ($mode === 'symlink') {
        symlink('../../library/Plugin', $root . '/modules/Servicecustom/Plugin');
    }
    file_put_contents($root . '/php-settings.json', json_encode($php));

    $client = [
        'id' => 1, 'email' => 'ann@example.com', 'email_approved' => 1, 'type' => 'individual', 'company' => null,
        'company_vat' => null, 'company_number' => null, 'first_name' => 'Ann', 'last_name' => 'Example', 'gender' => null,
        'birthday' => null, 'phone_cc' => '1', 'phone' => '5550100', 'address_1' => '1 Main St', 'address_2' => null,
        'city' => 'Springfield', 'state' => null, 'postcode' => '12345', 'country' => 'US', 'currency' => 'USD',
        'lang' => 'en_US', 'timezone' => 'UTC', 'billing_email' => 'billing@example.com',
    ];
    $product = static fn (int $id, string $title) => ['id' => $id, 'title' => $title, 'type' => 'custom', 'plugin' => 'LicenseBridge', 'plugin_config' => null, 'form_id' => 1, 'config' => null];
    $state = [
        'seq' => [],
        'clients' => ['1' => $client, '2' => ['id' => 2, 'email' => 'bob@example.com', 'first_name' => 'Bob', 'last_name' => 'Other'] + $client],
        'products' => ['5' => $product(5, 'cPanel licence'), '6' => $product(6, 'LiteSpeed licence'), '7' => $product(7, 'cPanel + CloudLinux'), '9' => $product(9, 'Unmapped licence')],
        'orders' => [],
        'services' => [],
        'history' => [],
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
