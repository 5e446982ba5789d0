<?php

/**
 * Test driver: runs ONE Paymenter flow against the real LicenseBridge extension, the way Paymenter
 * v1.5.8 runs it, and prints what Paymenter would record as JSON. Test code only.
 *
 *   PM_STATE=state.json [PM_LOG=log.jsonl] php paymenter.php <command> [args...]
 *
 * PM_STATE is the "database" (see paymenter-stub.php); it is read at start and written back.
 * Every run starts like a Paymenter request: AppServiceProvider::boot() calls boot() on each
 * server extension, then the routes are loaded (or the route cache replaces them), then the flow
 * runs, then the queue worker runs the jobs it dispatched. A request through a route (show,
 * post-change-ip) goes through Router::findRoute (the Routing event, then the match).
 *
 * Commands (each names the Paymenter code it follows):
 *   create-server <json settings>    Admin → Servers → Create (ServerResource\Pages\CreateServer::handleRecordCreation)
 *   edit-server <json settings>      Admin → Servers → a server → Save (EditServer::handleRecordUpdate)
 *   artisan route:cache|route:clear  php artisan route:cache (a freshly booted application's routes) / route:clear
 *   discover                         ExtensionHelper::getAvailableExtensions + the admin/checkout forms
 *   test-config [json]               admin "Test Connection" (ServerResource), unsaved values merged over the saved ones
 *   checkout <product> <ip> [user]   Livewire Products\Checkout::rules/validate + Cart::checkout (service pending)
 *   pay <service>                    InvoiceObserver → ProcessPaidInvoiceService → RenewServiceService
 *   overdue <service>                CronJob "services_suspended"
 *   cron-terminate <service>         CronJob "services_terminated"
 *   upgrade <service> <product>      ServiceUpgradeService (paid upgrade) → UpgradeJob
 *   edit-expiry <service> <Y-m-d>    an admin edits "expires_at" (Filament saves in a transaction)
 *   admin <action> <service>         EditService "Trigger Extension Action" (create|suspend|unsuspend|terminate|upgrade)
 *   show <service>                   Livewire Services\Show (mount: getActions; render: getView)
 *   post-change-ip <service> <ip> [user] [csrf]   the change-IP form's POST through routes.php
 */

use App\Helpers\ExtensionHelper;
use App\Models\Product;
use App\Models\Server;
use App\Models\Service;
use App\Models\User;
use Illuminate\Support\Facades\DB;
use Illuminate\Support\Facades\Session;
use StandIn\Router;
use StandIn\Store;

require __DIR__ . '/paymenter-stub.php';

// composer.json: "autoload": {"psr-4": {"Paymenter\\Extensions\\": "extensions/"}}
$extensionsRoot = getenv('PM_EXTENSIONS') ?: dirname(__DIR__) . '/extensions';
spl_autoload_register(static function (string $class) use ($extensionsRoot): void {
    $prefix = 'Paymenter\\Extensions\\';
    if (str_starts_with($class, $prefix)) {
        $file = $extensionsRoot . '/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});

Store::load((string) getenv('PM_STATE'));
$command = $argv[1] ?? '';
$args = array_slice($argv, 2);
$out = ['command' => $command, 'failed_jobs' => [], 'jobs' => [], 'emails' => []];

/**
 * Application::boot(): the providers boot (AppServiceProvider::boot calls boot() of every server
 * extension, once per extension, errors reported: AppServiceProvider.php 154-164), then the
 * booted callbacks load the routes: routes/web.php and fresh name look-ups, or, when the routes
 * are cached, the cache in place of everything registered so far.
 */
function bootApplication(bool $useCache): void
{
    // A new application: its own router and event dispatcher (the facades point at it).
    Router::reset();
    Illuminate\Support\Facades\Event::$listeners = [];
    $booted = [];
    foreach (Store::$db['servers'] ?? [] as $row) {
        $server = Server::find($row['id']);
        if (!isset($booted[$server->extension])) {
            $booted[$server->extension] = true;
            ExtensionHelper::call($server, 'boot', mayFail: true);
        }
    }
    Router::booted($useCache ? (Store::$db['route_cache'] ?? null) : null);
}

bootApplication(true);

/** The queue worker: each job gets the service fresh from the database (SerializesModels). */
function work(array &$out): void
{
    while ($job = array_shift(Store::$queue)) {
        [$name, $serviceId] = $job;
        $service = Service::find($serviceId);
        try {
            // App\Jobs\Server\<Name>Job::handle
            $method = ['CreateJob' => 'createServer', 'SuspendJob' => 'suspendServer', 'UnsuspendJob' => 'unsuspendServer',
                'TerminateJob' => 'terminateServer', 'UpgradeJob' => 'upgradeServer'][$name];
            try {
                $data = ExtensionHelper::$method($service);
            } catch (Exception $e) {
                if ($e->getMessage() !== 'No server assigned to this product') {
                    throw $e;
                }
                $data = [];
            }
            $template = ['CreateJob' => 'new_server_created', 'SuspendJob' => 'server_suspended', 'TerminateJob' => 'server_terminated'][$name] ?? null;
            if ($template !== null) {
                // NotificationHelper::server*Notification: an array result becomes e-mail variables.
                $out['emails'][] = ['template' => $template, 'data' => is_array($data) ? $data : []];
            }
            $out['jobs'][] = ['job' => $name, 'service' => $serviceId, 'outcome' => 'done'];
        } catch (Throwable $e) {
            // $tries = 1: the job is failed and the exception reported.
            report($e);
            $out['jobs'][] = ['job' => $name, 'service' => $serviceId, 'outcome' => 'failed'];
            $out['failed_jobs'][] = ['job' => $name, 'service' => $serviceId, 'exception' => get_class($e), 'message' => $e->getMessage()];
        }
    }
}

function dispatchJob(string $name, Service $service): void
{
    if ($service->product->server) {
        Store::$queue[] = [$name, (string) $service->id];
    }
}

/** A subset of Laravel's validator: the rules the checkout builds (Products\Checkout::rules). */
function validateCheckout(array $config, array $values): array
{
    $errors = [];
    foreach ($config as $field) {
        $rules = [];
        if ($field['required'] ?? false) {
            $rules[] = 'required';
        }
        switch ($field['type'] ?? null) {
            case 'text':
            case 'number':
                $rules[] = 'string';
                break;
            case 'select':
            case 'radio':
                $rules[] = 'in:' . implode(',', array_keys($field['options']));
                break;
            case 'checkbox':
                $rules[] = 'nullable';
                $rules[] = 'boolean';
                break;
        }
        if (isset($field['validation'])) {
            $rules = array_merge($rules, is_array($field['validation']) ? $field['validation'] : explode('|', $field['validation']));
        }
        $label = $field['label'] ?? $field['name'];
        $value = $values[$field['name']] ?? null;
        $fail = static function (string $message) use (&$errors, $field, $label): void {
            $errors[$field['name']][] = str_replace(':attribute', $label, $message);
        };
        $empty = $value === null || (is_string($value) && trim($value) === '');
        foreach ($rules as $rule) {
            if ($rule === 'required') {
                if ($empty) {
                    $fail('The :attribute field is required.');
                }
                continue;
            }
            if ($empty) {
                continue; // Laravel skips non-implicit rules for an empty value
            }
            if ($rule instanceof Closure) {
                $rule('checkoutConfig.' . $field['name'], $value, $fail);
            } elseif ($rule === 'string') {
                is_string($value) || $fail('The :attribute field must be a string.');
            } elseif ($rule === 'ip') {
                filter_var($value, FILTER_VALIDATE_IP) !== false || $fail('The :attribute field must be a valid IP address.');
            } elseif ($rule === 'nullable') {
                // nothing
            } else {
                throw new LogicException('stand-in: no implementation of the validation rule ' . (is_string($rule) ? $rule : get_debug_type($rule)));
            }
        }
    }
    return $errors;
}

/** Field definitions as JSON can show them (closures named, not serialised). */
function describe(array $fields): array
{
    return array_map(static function (array $f): array {
        if (isset($f['validation']) && is_array($f['validation'])) {
            $f['validation'] = array_map(static fn ($r) => $r instanceof Closure ? 'closure' : $r, $f['validation']);
        }
        return $f;
    }, $fields);
}

function serviceState(string $id): array
{
    return ['service' => Store::$db['services'][$id] ?? null, 'properties' => Store::$db['properties'][$id] ?? []];
}

function nextId(string $table): string
{
    $ids = array_map('intval', array_keys(Store::$db[$table] ?? []));
    return (string) (($ids ? max($ids) : 0) + 1);
}

$serverRow = reset(Store::$db['servers']);
$server = $serverRow ? Server::find($serverRow['id']) : null;

/** A form's settings as JSON from the command line (Filament's state: strings, a checkbox a bool). */
function formSettings(?string $json): array
{
    $settings = json_decode($json ?? '{}', true);
    return is_array($settings) ? $settings : [];
}

/** The server's settings rows as stored (for the test: flags, and whether the value is stored as typed). */
function storedSettings(Server $server, array $typed): array
{
    $rows = [];
    foreach (Store::$db['settings'] ?? [] as $row) {
        if ((string) $row['settingable_id'] === (string) $server->id) {
            $rows[$row['key']] = ['type' => $row['type'], 'encrypted' => (bool) $row['encrypted'],
                'stored_as_typed' => array_key_exists($row['key'], $typed) && (string) $row['value'] === (string) $typed[$row['key']]];
        }
    }
    ksort($rows);
    return $rows;
}

switch ($command) {
    case 'create-server':
        // CreateServer::handleRecordCreation (v1.5.8, 22-45): the record, then each non-null form
        // value with updateOrCreate(['key' => $key], ['value' => $value]) (no type, no encrypted
        // flag), then ExtensionHelper::call($record, 'enabled', [$record], mayFail: true).
        $data = formSettings($args[0] ?? null);
        $record = Server::create(['name' => 'License Bridge', 'extension' => 'LicenseBridge', 'type' => 'server', 'enabled' => true]);
        foreach ($data as $key => $value) {
            if (is_null($value)) {
                continue;
            }
            $record->settings()->updateOrCreate(['key' => $key], ['value' => $value]);
        }
        ExtensionHelper::call($record, 'enabled', [$record], mayFail: true);
        $out['server_id'] = $record->id;
        $out['settings'] = storedSettings($record, $data);
        break;

    case 'edit-server':
        // EditServer::handleRecordUpdate (v1.5.8, 32-58): the form is filled with every stored
        // (decrypted) value (mutateFormDataBeforeFill); each config option is stored with its
        // database_type and encrypted flag; then ExtensionHelper::call($record, 'updated', [$record]).
        $data = array_merge(ExtensionHelper::settingsToArray($server->settings), formSettings($args[0] ?? null));
        foreach (ExtensionHelper::getConfig($server->type, $server->extension) as $option) {
            $server->settings()->updateOrCreate([
                'key' => $option['name'],
                'settingable_id' => (string) $server->id,
                'settingable_type' => 'App\\Models\\Server',
            ], [
                'type' => $option['database_type'] ?? 'string',
                'value' => isset($data[$option['name']]) ? (is_array($data[$option['name']]) ? json_encode($data[$option['name']]) : $data[$option['name']]) : null,
                'encrypted' => $option['encrypted'] ?? false,
            ]);
        }
        ExtensionHelper::call($server, 'updated', [$server], mayFail: true);
        $out['settings'] = storedSettings($server, $data);
        break;

    case 'artisan':
        if (($args[0] ?? '') === 'route:cache') {
            // RouteCacheCommand: a fresh application, booted without the cache, and its routes.
            bootApplication(false);
            Store::$db['route_cache'] = Router::snapshot();
            $out['cached_routes'] = array_values(array_filter(array_column(Store::$db['route_cache'], 'name')));
        } elseif (($args[0] ?? '') === 'route:clear') {
            unset(Store::$db['route_cache']);
        }
        break;

    case 'discover':
        // ExtensionHelper::getAvailableExtensions: extensions/<Type>s/<Name>/<Name>.php whose class exists.
        $found = [];
        foreach (glob($extensionsRoot . '/*', GLOB_ONLYDIR) as $typeFolder) {
            $type = strtolower(rtrim(basename($typeFolder), 's'));
            foreach (glob($typeFolder . '/*', GLOB_ONLYDIR) as $dir) {
                $name = basename($dir);
                $class = '\\Paymenter\\Extensions\\' . ucfirst($type) . 's\\' . $name . '\\' . $name;
                if (class_exists($class)) {
                    $meta = (new ReflectionClass($class))->getAttributes(App\Attributes\ExtensionMeta::class);
                    $found[] = ['name' => $name, 'type' => $type, 'meta' => $meta ? (array) $meta[0]->newInstance() : null];
                }
            }
        }
        $product = Product::find(array_key_first(Store::$db['products']));
        $out['extensions'] = $found;
        $out['config'] = ExtensionHelper::getExtension('server', $server->extension, $server->settings)->getConfig([]);
        $out['product_config'] = ExtensionHelper::getProductConfig($server, []);
        $out['checkout_config'] = describe(ExtensionHelper::getCheckoutConfig($product, []));
        $out['methods'] = get_class_methods('\\Paymenter\\Extensions\\Servers\\LicenseBridge\\LicenseBridge');
        break;

    case 'test-config':
        // The hint action passes $get('settings'): the form's current values.
        $values = array_merge(ExtensionHelper::settingsToArray($server->settings), json_decode($args[0] ?? '{}', true) ?: []);
        $out['result'] = ExtensionHelper::testConfig($server, $values);
        break;

    case 'checkout':
        [$productId, $ip] = $args;
        $product = Product::find($productId);
        $config = ExtensionHelper::getCheckoutConfig($product, ['license_ip' => $ip]);
        $values = [];
        foreach ($config as $field) {
            $values[$field['name']] = $field['name'] === 'license_ip' ? $ip : ($field['default'] ?? null);
        }
        $errors = validateCheckout($config, $values);
        if ($errors) {
            $out['validation_errors'] = $errors;
            break;
        }
        $id = nextId('services');
        Store::$db['services'][$id] = ['id' => $id, 'user_id' => $args[2] ?? '7', 'product_id' => (string) $productId,
            'plan_id' => (string) $product->plan_id, 'quantity' => 1, 'status' => 'pending', 'expires_at' => null, 'price' => '10.00'];
        $service = Service::find($id);
        foreach ($values as $key => $value) {
            $service->properties()->updateOrCreate(['key' => $key], ['value' => $value]);
        }
        $out['service_id'] = $id;
        break;

    case 'pay':
        $service = Service::find($args[0]);
        // RenewServiceService::handle
        if ($service->status === Service::STATUS_SUSPENDED) {
            dispatchJob('UnsuspendJob', $service);
        } elseif ($service->status === Service::STATUS_PENDING) {
            dispatchJob('CreateJob', $service);
        }
        $service->expires_at = $service->calculateNextDueDate();
        $service->status = Service::STATUS_ACTIVE;
        $service->save();
        work($out);
        break;

    case 'overdue':
        $service = Service::find($args[0]);
        dispatchJob('SuspendJob', $service);
        $service->update(['status' => Service::STATUS_SUSPENDED]);
        work($out);
        break;

    case 'cron-terminate':
        $service = Service::find($args[0]);
        dispatchJob('TerminateJob', $service);
        $service->update(['status' => Service::STATUS_CANCELLED]);
        work($out);
        break;

    case 'upgrade':
        DB::transaction(static function () use ($args): void {
            $service = Service::find($args[0]);
            $service->product_id = (string) $args[1];
            $service->save();
            dispatchJob('UpgradeJob', $service);
        });
        work($out);
        break;

    case 'edit-expiry':
        DB::transaction(static function () use ($args): void {
            $service = Service::find($args[0]);
            $service->expires_at = new DateTimeImmutable($args[1]);
            $service->save();
        });
        break;

    case 'admin':
        [$action, $id] = $args;
        $service = Service::find($id);
        try {
            $data = ExtensionHelper::{$action . 'Server'}($service);
            $out['result'] = $data;
            $out['admin_notification'] = ['type' => 'success', 'title' => 'Action triggered successfully'];
        } catch (Exception $e) {
            report($e);
            $out['admin_notification'] = ['type' => 'danger', 'title' => 'Error occured while triggering the action:', 'body' => $e->getMessage()];
        }
        break;

    case 'show':
        // GET /services/{service} (routes/web.php 46), or Livewire's update request for it: the
        // router fires Routing and matches before the component renders.
        $found = Router::findRoute('GET', '/services/' . $args[0], new Illuminate\Http\Request([], User::find('7')));
        if ($found === null || $found[0]->name !== 'services.show') {
            throw new RuntimeException('stand-in: the services.show route is missing');
        }
        $service = Service::find($args[0]);
        // HasNotifications::bootHasNotifications
        $notification = Session::get('notification');
        Session::forget('notification');
        // Show::mount
        $buttons = $views = $fields = [];
        if ($service->status === Service::STATUS_ACTIVE) {
            $actions = [];
            try {
                $actions = ExtensionHelper::getActions($service);
            } catch (Exception $e) {
            }
            foreach ($actions as $action) {
                match ($action['type']) {
                    'button' => $buttons[] = $action,
                    'view' => $views[] = $action,
                    'text' => $fields[] = $action,
                    default => null,
                };
            }
        }
        $currentView = $views[0]['name'] ?? null;
        // Show::render
        $html = null;
        if ($currentView) {
            try {
                $html = (string) ExtensionHelper::getView($service, $views[0]);
            } catch (Exception $e) {
                $notification = ['message' => 'Got an error while trying to load the view', 'type' => 'error'];
            }
        }
        $out['page'] = ['fields' => $fields, 'buttons' => $buttons, 'views' => $views, 'html' => $html, 'notification' => $notification];
        break;

    case 'post-change-ip':
        // The change-IP form's POST, dispatched as Laravel dispatches a request: Router::findRoute
        // (the Routing event, then the match: 404 when no route matches), the route's middleware
        // (web: VerifyCsrfToken, 419; auth: a guest is redirected to the login), the implicit
        // binding of {service} (404), then the controller: the container builds the class with
        // no arguments ($config = []) and calls the method.
        $path = '/extensions/licensebridge/services/' . rawurlencode($args[0]) . '/change-ip';
        $input = ['new_ip' => $args[1], '_token' => $args[3] ?? Session::get('_token')];
        $user = User::find($args[2] ?? '7');
        $request = new Illuminate\Http\Request($input, $user);
        $found = Router::findRoute('POST', $path, $request);
        $response = ['status' => 200];
        if ($found === null) {
            $response = ['status' => 404];
        } else {
            [$route, $params] = $found;
            if (in_array('web', $route->middleware, true) && $input['_token'] !== Session::get('_token')) {
                $response = ['status' => 419];
            } elseif (in_array('auth', $route->middleware, true) && !$user) {
                $response = ['status' => 302, 'location' => 'http://paymenter.test/login'];
            } elseif (!($service = Service::find($params['service'] ?? ''))) {
                $response = ['status' => 404];
            } else {
                [$class, $method] = $route->action;
                $controller = new $class();
                try {
                    $result = $controller->$method($request, $service);
                    $response = $result instanceof StandIn\RedirectResponse ? ['status' => 302, 'location' => $result->targetUrl] : ['status' => 200, 'body' => $result];
                } catch (Symfony\Component\HttpKernel\Exception\HttpException $e) {
                    $response = ['status' => $e->statusCode];
                }
            }
            $out['route'] = ['uri' => $route->uri, 'middleware' => $route->middleware, 'name' => $route->name];
        }
        $out['response'] = $response;
        $out['session_notification'] = Session::get('notification');
        break;

    default:
        fwrite(STDERR, "unknown command {$command}\n");
        exit(2);
}

if (isset($args[0]) && isset(Store::$db['services'][$args[0]])) {
    $out['state'] = serviceState($args[0]);
} elseif (isset($out['service_id'])) {
    $out['state'] = serviceState($out['service_id']);
}
$out['routes_cached'] = isset(Store::$db['route_cache']);
$out['log'] = Store::$log;
Store::save();
echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_PRETTY_PRINT | JSON_INVALID_UTF8_SUBSTITUTE);
