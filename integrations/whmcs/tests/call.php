<?php
/**
 * Calls one License Bridge module function the way WHMCS does, and prints what WHMCS would
 * make of it as JSON. LB_MODULE_NAME names the module (default "licensebridge"), LB_WHMCS_ROOT
 * the folder holding modules/servers/ (default integrations/whmcs). The call is described by the
 * JSON in LB_CALL:
 *
 *   kind      "functions"    the module's functions, as WHMCS would find them
 *             "definition"   a function WHMCS calls with no argument (MetaData, ConfigOptions,
 *                            AdminCustomButtonArray, ClientAreaCustomButtonArray, ClientAreaAllowedFunctions)
 *             "service"      a core function with the service's $params (CreateAccount, Renew, ...,
 *                            AdminServicesTabFields)
 *             "server"       TestConnection, with only the server's fields
 *             "admin-button" a custom function that must be in AdminCustomButtonArray
 *             "client-button" a custom function that must be in ClientAreaCustomButtonArray or
 *                            ClientAreaAllowedFunctions, with the client's request in $_GET/$_POST
 *                            (clientarea.php?action=productdetails&id=..&modop=custom&a=..)
 *             "client-area"  ClientArea, its template rendered with Smarty as WHMCS does
 *   function  the function's name without the module's prefix ("licensebridge_")
 *   params    WHMCS's $params without `model`
 *   model     {"class": "Service"|"Addon", "attributes": {...}, "dates": [...], "customfields": {...}}
 *   request   {"method": "POST", "get": {...}, "post": {...}}
 *   page      the page's own Smarty vars (e.g. the CSRF `token`)
 *
 * Smarty: WHMCS 8 renders module templates with Smarty 3.1; the tests use Debian's smarty3
 * (LB_SMARTY names its Smarty.class.php). Without it, "rendered" is null.
 */

require __DIR__ . '/whmcs-standin.php';

// WHMCS keeps a product's module by name (its Module Settings) and loads the server module from
// modules/servers/<name>/<name>.php under its root; the module's functions are <name>_<Function>
// (developers.whmcs.com, "Getting Started" and "Supported Functions"; the sample module
// provisioningmodule/provisioningmodule.php). A name must be a single word of lowercase letters
// and digits, starting with a letter: the stand-in refuses any other, as WHMCS's rule says.
$name = getenv('LB_MODULE_NAME') ?: 'licensebridge';
if (preg_match('/^[a-z][a-z0-9]*$/D', $name) !== 1) {
    fwrite(STDERR, "not a WHMCS module name (lowercase letters and digits, starting with a letter): $name\n");
    exit(3);
}
$root = getenv('LB_WHMCS_ROOT') ?: dirname(__DIR__);
$moduleDir = $root . '/modules/servers/' . $name;
$module = $moduleDir . '/' . $name . '.php';
if (!is_file($module)) {
    fwrite(STDERR, "no server module $name: $module is missing\n");
    exit(3);
}
require $module;

$call = json_decode(getenv('LB_CALL') ?: '{}', true, 512, JSON_THROW_ON_ERROR);
$kind = $call['kind'] ?? 'service';
$fn = $name . '_' . ($call['function'] ?? '');
$params = $call['params'] ?? [];

$model = null;
if (isset($call['model'])) {
    $attributes = $call['model']['attributes'] ?? [];
    foreach ($call['model']['dates'] ?? [] as $field) {
        if (isset($attributes[$field])) {
            $attributes[$field] = new DateTimeImmutable($attributes[$field]);
        }
    }
    $class = ($call['model']['class'] ?? 'Service') === 'Addon' ? WHMCS\Service\Addon::class : WHMCS\Service\Service::class;
    $model = new $class($attributes, $params['customfields'] ?? []);
    $params['model'] = $model;
}

$out = ['function' => $fn, 'exists' => function_exists($fn), 'result' => null, 'outcome' => null, 'rendered' => null];

/** The custom functions a button array allows (WHMCS reads the values: label => function). */
$allowed = static function (string ...$lists) use ($name): array {
    $out = [];
    foreach ($lists as $list) {
        $f = $name . '_' . $list;
        if (function_exists($f)) {
            foreach ((array) $f() as $value) {
                $out[] = strtolower((string) $value);
            }
        }
    }
    return $out;
};

/** Renders a module template as WHMCS does: module vars ($params), the page's vars, then the function's vars. */
$render = static function (array $page) use ($moduleDir, $params, $call): ?string {
    $smartyClass = getenv('LB_SMARTY') ?: '/usr/share/php/smarty3/Smarty.class.php';
    if (!is_file($smartyClass)) {
        return null;
    }
    require_once $smartyClass;
    $file = (string) ($page['templatefile'] ?? '');
    $file = str_ends_with($file, '.tpl') ? $file : $file . '.tpl';
    // "Module template files can exist in either the root directory of the module or in a templates subdirectory."
    $path = is_file($moduleDir . '/' . $file) ? $moduleDir . '/' . $file : $moduleDir . '/templates/' . $file;
    if (!is_file($path)) {
        throw new RuntimeException('template not found: ' . $file);
    }
    $smarty = new Smarty();
    $smarty->setCompileDir(sys_get_temp_dir() . '/lb-whmcs-smarty-' . getmypid());
    $smarty->setCacheDir(sys_get_temp_dir() . '/lb-whmcs-smarty-' . getmypid());
    $smarty->assign($params);
    $smarty->assign($call['page'] ?? []);
    $smarty->assign($page['vars'] ?? []);
    // Smarty 3.1 itself sets dynamic properties (deprecated in PHP 8.2); a warning from the
    // template (e.g. an unassigned variable) still reaches stderr and fails the test.
    $level = error_reporting(E_ALL & ~E_DEPRECATED);
    try {
        return $smarty->fetch($path);
    } finally {
        error_reporting($level);
    }
};

switch ($kind) {
    case 'functions':
        // The module's functions as WHMCS finds them (function_exists is case-insensitive, like PHP).
        $out['result'] = array_values(array_filter(
            get_defined_functions()['user'],
            static fn (string $f) => str_starts_with($f, strtolower($name) . '_')
        ));
        break;

    case 'definition':
        $out['result'] = $out['exists'] ? $fn() : null;
        break;

    case 'server':
    case 'service':
        $out['result'] = $out['exists'] ? $fn($params) : null;
        $out['outcome'] = $out['result'] === 'success' ? 'success' : 'error';
        break;

    case 'admin-button':
        if (!in_array(strtolower((string) $call['function']), $allowed('AdminCustomButtonArray'), true)) {
            $out['outcome'] = 'not allowed';
            break;
        }
        $out['result'] = $fn($params);
        $out['outcome'] = $out['result'] === 'success' ? 'success' : 'error';
        break;

    case 'client-button':
        // clientarea.php refuses any `a` that the module does not list for clients.
        if (!in_array(strtolower((string) $call['function']), $allowed('ClientAreaCustomButtonArray', 'ClientAreaAllowedFunctions'), true)) {
            $out['outcome'] = 'not allowed';
            break;
        }
        $request = $call['request'] ?? [];
        $_SERVER['REQUEST_METHOD'] = strtoupper($request['method'] ?? 'GET');
        $_GET = $request['get'] ?? [];
        $_POST = $request['post'] ?? [];
        $_REQUEST = array_merge($_GET, $_POST);
        $out['result'] = $fn($params);
        if (is_array($out['result'])) {
            // A custom page: ['templatefile', 'breadcrumb', 'vars'].
            $out['outcome'] = 'page';
            $out['rendered'] = $render($out['result']);
        } else {
            // Twenty-One: a success alert for "success", else "Module action failed" with the text.
            $out['outcome'] = $out['result'] === 'success' ? 'success' : 'error';
        }
        break;

    case 'client-area':
        $out['result'] = $out['exists'] ? $fn($params) : null;
        if (is_array($out['result'])) {
            $out['rendered'] = $render($out['result']);
        } elseif (is_string($out['result'])) {
            $out['rendered'] = $out['result'];
        }
        break;

    default:
        fwrite(STDERR, "unknown kind $kind\n");
        exit(2);
}

if ($model !== null) {
    $out['properties_saved'] = $model->serviceProperties->saved;
    $out['model_after'] = array_map(
        static fn ($v) => $v instanceof DateTimeInterface ? $v->format('Y-m-d') : $v,
        $model->attributes()
    );
}
// `result` may hold objects (never, for this module); keep the JSON printable.
echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_PARTIAL_OUTPUT_ON_ERROR);
