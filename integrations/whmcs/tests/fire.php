<?php
/**
 * Test driver: loads the WHMCS stand-ins and the REAL module, then does one thing and prints
 * what happened as JSON on stdout.
 *
 *   php fire.php <HookPoint> [vars]   fire a hook (vars: a JSON file or inline JSON; params.model becomes an object)
 *   php fire.php activate|deactivate|config
 *   php fire.php output [vars]        render the admin page; vars {"post": {"lb_action": "test"}} posts a form
 *   php fire.php queue                the retry and state tables
 *
 * Needs LB_STUB_FIXTURE (see whmcs-stub.php).
 */

require __DIR__ . '/whmcs-stub.php';
$moduleDir = dirname(__DIR__) . '/modules/addons/license_bridge';
require $moduleDir . '/hooks.php';
require $moduleDir . '/license_bridge.php';

$command = $argv[1] ?? '';
$arg = $argv[2] ?? '';
$vars = [];
if ($arg !== '') {
    $json = ltrim($arg)[0] === '{' ? $arg : (string) file_get_contents($arg);
    $vars = json_decode($json, true, 512, JSON_THROW_ON_ERROR);
}
if (isset($vars['params']['model']) && is_array($vars['params']['model'])) {
    $vars['params']['model'] = (object) $vars['params']['model'];
}

$out = ['command' => $command];
switch ($command) {
    case '':
        fwrite(STDERR, "usage: php fire.php <HookPoint|activate|deactivate|config|output|queue> [vars]\n");
        exit(2);
    case 'activate':
        $out['result'] = license_bridge_activate();
        break;
    case 'deactivate':
        $out['result'] = license_bridge_deactivate();
        break;
    case 'config':
        $out['result'] = license_bridge_config();
        break;
    case 'output':
        if (isset($vars['post'])) {
            $_SERVER['REQUEST_METHOD'] = 'POST';
            $_POST = $vars['post'];
        }
        ob_start();
        license_bridge_output(['modulelink' => 'addonmodules.php?module=license_bridge']);
        $out['html'] = ob_get_clean();
        break;
    case 'queue':
        lb_install_schema();
        $pdo = lb_db();
        $out['queue'] = $pdo->query('SELECT * FROM mod_license_bridge_queue ORDER BY id')->fetchAll(PDO::FETCH_ASSOC);
        $out['state'] = $pdo->query('SELECT * FROM mod_license_bridge_state ORDER BY service_id')->fetchAll(PDO::FETCH_ASSOC);
        break;
    default:
        $out['callbacks'] = lb_stub_run_hook($command, $vars);
}
if (class_exists('LicenseBridge\\Bridge')) {
    $out['trace'] = \LicenseBridge\Bridge::$trace;
}
echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_PRETTY_PRINT), "\n";
