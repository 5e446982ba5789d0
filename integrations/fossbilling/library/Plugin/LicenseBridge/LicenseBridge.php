<?php

declare(strict_types=1);

/**
 * LicenseBridge: a FOSSBilling "custom product" (Servicecustom) plug-in that provisions software
 * licences through license-bridge's provisioning API (service contract, section 8).
 *
 * Installed as library/Plugin/LicenseBridge/ (this file, LicenseBridgeClient.php, and config.php
 * made from config.example.php); a product of type "Custom" names it in "Plugin Name". See
 * integrations/fossbilling/README.md.
 *
 * How FOSSBilling calls it (Servicecustom\Service::callOnAdapter and ::customCall, FOSSBilling 0.8.5
 * and main; nothing here is taken from FOSSBilling's code, only its calling convention):
 *  - it loads this file with a RELATIVE `require_once 'Plugin/LicenseBridge/LicenseBridge.php'`, so
 *    FOSSBilling's library/ folder must be on PHP's include_path (README, "The include_path fix");
 *  - it builds a new instance for every call: `new LicenseBridge($pluginConfig)`, where
 *    $pluginConfig is product.plugin_config, which no FOSSBilling screen or API writes (always []);
 *  - lifecycle: `$plugin->activate($data, $order_data, [])`, and the same for renew, suspend,
 *    unsuspend, cancel, uncancel and delete. $data is the service's config (the order's form
 *    fields, which the CUSTOMER typed) plus id/client_id/plugin/dates; $order_data is the order's
 *    API array (database columns, `config`, and `client`). The return value is discarded; an
 *    exception stops the action (activate: order `failed_setup`; renew: `failed_renew`; the others:
 *    the order's status is not changed) and its message is shown to the admin.
 *  - customCall: ANY other public method, by name, with ($data, $order_data, $params) where $params
 *    is the whole API request. A client reaches it through `client/servicecustom/call` (the request
 *    always holds `order_id` and `method`), an admin through `admin/servicecustom/<method>` (holds
 *    `order_id`, no `method`). FOSSBilling refuses only the seven lifecycle names, compared
 *    case-sensitively, while PHP method names are case-insensitive ("Suspend" gets through).
 *
 * So this class keeps its own allow-list: the lifecycle methods run only with FOSSBilling's empty
 * $params; customCall reaches licenseInfo and changeIp (client and admin) and changePackage (admin
 * only); every other name, private helpers included (through __call), is refused; every parameter
 * is checked.
 *
 * Where the settings come from: config.php beside this file (bridge URL, token, product map). Not
 * the constructor's config (never written by FOSSBilling), not the order data (the customer
 * controls it), not environment variables (PHP-FPM clears them and cron has its own).
 *
 * The token goes only into the Authorization header (LicenseBridgeClient). It is never returned,
 * put in an exception message or logged; every log line and message is scrubbed of it as well.
 */

require_once __DIR__ . DIRECTORY_SEPARATOR . 'LicenseBridgeClient.php';

final class LicenseBridge
{
    /** FOSSBilling's seven lifecycle actions: always called with an empty $params. */
    private const LIFECYCLE = ['activate', 'renew', 'suspend', 'unsuspend', 'cancel', 'uncancel', 'delete'];

    /** customCall methods a client may use (lower-case name => the parameters each takes). */
    private const CLIENT_CALLS = ['licenseinfo' => [], 'changeip' => ['new_ip']];

    /** customCall methods an admin may use. */
    private const ADMIN_CALLS = ['licenseinfo' => [], 'changeip' => ['new_ip'], 'changepackage' => ['package_identifier']];

    /** Settings config.php may hold, with their defaults (null: required). */
    private const SETTINGS = [
        'url' => null,
        'token' => null,
        'products' => null,
        'timeout' => 30,
        'ip_field' => 'ip',
        'service_prefix' => '',
        'log_calls' => false,
    ];

    /** The licence fields a customer is shown (the bridge's `last_error` is for the operator). */
    private const SHOWN = ['license_key', 'status', 'ip', 'type', 'variant', 'bundle', 'package_identifier', 'expires_at', 'install_command', 'ip_changes_left'];

    /** The bridge's billing cycles by months; FOSSBilling periods are "<1-9><D|W|M|Y>". */
    private const CYCLES = [1 => 'monthly', 3 => 'quarterly', 6 => 'semiannually', 12 => 'annually', 24 => 'biennially', 36 => 'triennially'];

    /** Ids as the bridge accepts them (service_identifier, package_identifier). */
    private const ID_PATTERN = '/^[A-Za-z0-9_.:-]{1,64}$/';

    private bool $constructed = false;

    /** @var list<string> What every log line and message is scrubbed of (the token, once read). */
    private array $secrets = [];

    /**
     * FOSSBilling passes product.plugin_config, decoded. No FOSSBilling screen or API writes that
     * column, so it is ignored: the settings live in config.php. Called a second time (a client
     * naming "__construct" in servicecustom/call), it refuses.
     *
     * @param mixed $config
     */
    public function __construct($config = [])
    {
        if ($this->constructed) {
            throw self::forbidden('__construct');
        }
        $this->constructed = true;
    }

    /**
     * Reached only for inaccessible (private) method names: customCall checks method_exists(),
     * which is true for private methods too, and PHP then lands here instead of failing with an
     * \Error that FOSSBilling would not catch.
     *
     * @param mixed $name
     * @param mixed $arguments
     */
    public function __call($name, $arguments)
    {
        throw self::forbidden(is_string($name) ? $name : '__call');
    }

    // ---- lifecycle -------------------------------------------------------------------------

    /** Order activation: buys the licence (create). Throws unless the licence is active. */
    public function activate($data, $order_data, $params = [])
    {
        return $this->guarded('activate', $params, function () use ($data, $order_data): bool {
            $order = $this->order($order_data);
            $settings = $this->settings();
            [$cycle, $due] = $this->term($order, $order['expires_at']);
            $this->create($order, $settings, [
                'package_identifier' => $this->packageOf($order, $settings),
                'ip' => $this->formIp($data, $order_data, $settings),
                'billing_cycle' => $cycle,
                'next_due_date' => $due,
            ], 'activation');
            return true;
        });
    }

    /**
     * Paid renewal: records the payment at the bridge with the date FOSSBilling is about to set
     * as the order's expiry (expires_at + period; FOSSBilling's default renewal logic). Sending the
     * date, not "one more cycle", makes a repeated renew (after a failure) change nothing.
     * FOSSBilling makes a renewed order active even when it was suspended (an admin's "Renew"
     * does not unsuspend first, a paid invoice does), so a suspended licence is unsuspended too.
     */
    public function renew($data, $order_data, $params = [])
    {
        return $this->guarded('renew', $params, function () use ($order_data): bool {
            $order = $this->order($order_data);
            $settings = $this->settings();
            [, $due] = $this->term($order, $order['expires_at']);
            $target = ['service_identifier' => $this->serviceId($order, $settings)];
            $r = $this->call($settings, 'renew', $target + ['next_due_date' => $due], $order);
            if (!$r['ok']) {
                throw $this->failure('renewal', $order, $r);
            }
            if (($r['data']['status'] ?? null) === 'suspended') {
                $u = $this->call($settings, 'unsuspend', $target, $order);
                if (!$u['ok']) {
                    throw $this->failure('unsuspension after the renewal', $order, $u);
                }
            }
            return true;
        });
    }

    public function suspend($data, $order_data, $params = [])
    {
        return $this->guarded('suspend', $params, fn (): bool => $this->statusCall('suspend', $order_data));
    }

    public function unsuspend($data, $order_data, $params = [])
    {
        return $this->guarded('unsuspend', $params, fn (): bool => $this->statusCall('unsuspend', $order_data));
    }

    /** Cancellation ends the licence: terminate. */
    public function cancel($data, $order_data, $params = [])
    {
        return $this->guarded('cancel', $params, fn (): bool => $this->statusCall('terminate', $order_data));
    }

    /**
     * Un-cancelling orders the licence again: the bridge re-activates a terminated service (it
     * unsuspends the licence the reseller still has, or buys one when it has none). The IP and
     * package are the licence's last ones (the customer may have changed the IP since the order);
     * when the bridge never had the service, the order's own.
     */
    public function uncancel($data, $order_data, $params = [])
    {
        return $this->guarded('uncancel', $params, function () use ($data, $order_data): bool {
            $order = $this->order($order_data);
            $settings = $this->settings();
            $info = $this->call($settings, 'info', ['service_identifier' => $this->serviceId($order, $settings)], $order);
            if ($info['ok']) {
                $ip = self::ip($info['data']['ip'] ?? null);
                $package = self::id($info['data']['package_identifier'] ?? null);
            } elseif ($info['status'] === 404) {
                $ip = null;
                $package = null;
            } else {
                throw $this->failure('re-activation', $order, $info);
            }
            [$cycle, $due] = $this->term($order, null);
            $this->create($order, $settings, [
                'package_identifier' => $package ?? $this->packageOf($order, $settings),
                'ip' => $ip ?? $this->formIp($data, $order_data, $settings),
                'billing_cycle' => $cycle,
                'next_due_date' => $due,
            ], 're-activation');
            return true;
        });
    }

    /** Deleting the order ends the licence: terminate (nothing to do when the bridge never had it). */
    public function delete($data, $order_data, $params = [])
    {
        return $this->guarded('delete', $params, fn (): bool => $this->statusCall('terminate', $order_data));
    }

    // ---- customCall: client area and admin ------------------------------------------------------

    /**
     * The licence for the client area: key, status, IP, install command, IP changes left. Never
     * throws for a bridge failure (a client template calls it while rendering the order page):
     * answers `available: false` with a message instead.
     *
     * @return array<string, mixed>
     */
    public function licenseInfo($data, $order_data, $params = [])
    {
        $this->customCall('licenseInfo', $order_data, $params);
        try {
            $order = $this->order($order_data);
            $settings = $this->settings();
            $r = $this->call($settings, 'info', ['service_identifier' => $this->serviceId($order, $settings)], $order);
        } catch (\Throwable $e) {
            $this->log('licenseInfo failed: ' . $e->getMessage());
            return ['available' => false, 'message' => 'The licence details are not available right now. Please try again later.'];
        }
        if ($r['ok']) {
            return ['available' => true, 'message' => null] + $this->shown($r['data']);
        }
        if ($r['status'] === 404) {
            return ['available' => false, 'message' => 'No licence has been set up for this service yet.'];
        }
        return ['available' => false, 'message' => 'The licence details are not available right now. Please try again later.'];
    }

    /**
     * The customer's (or an admin's) IP change, within the product's max_ip_changes. A refusal is a
     * FOSSBilling\InformationException with a message for the customer; a change the bridge is
     * still applying answers `pending: true`.
     *
     * @return array<string, mixed>
     */
    public function changeIp($data, $order_data, $params = [])
    {
        $this->customCall('changeIp', $order_data, $params);
        $newIp = self::ip($params['new_ip'] ?? null);
        if ($newIp === null) {
            throw self::info('Enter a valid IPv4 or IPv6 address.');
        }
        return $this->guardedCall(function () use ($order_data, $newIp): array {
            $order = $this->order($order_data);
            $settings = $this->settings();
            $r = $this->call($settings, 'change-ip', ['service_identifier' => $this->serviceId($order, $settings), 'new_ip' => $newIp], $order);
            if ($r['ok']) {
                return ['done' => true, 'pending' => false, 'message' => 'The licence now runs on ' . $newIp . '.'] + $this->shown($r['data']);
            }
            if ($r['pending']) {
                return ['done' => false, 'pending' => true, 'message' => 'The IP change to ' . $newIp . ' is being applied; it shows here within a few minutes. There is no need to send it again.'];
            }
            switch ($r['code']) {
                case 'ip_change_limit':
                    throw self::info('No IP changes are left for this licence: all the changes its product allows have been used. Please contact support.');
                case 'ip_in_use':
                    throw self::info($newIp . ' already has a licence of this kind. Please choose another IP address or contact support.');
                case 'ip_unusable':
                    throw self::info($newIp . ' cannot be licensed (it is a private, reserved or otherwise unusable address).');
                case 'service_terminated':
                    throw self::info('This licence has ended, so its IP address cannot be changed.');
                case 'validation':
                    throw self::info('The IP address was refused: ' . self::fieldErrors($r['data']));
                default:
                    throw self::error('The IP address could not be changed right now. Please try again later or contact support.');
            }
        });
    }

    /**
     * Admin only (FOSSBilling has no package-change hook for custom products: upgrades are support
     * tickets): `POST /api/admin/servicecustom/changePackage {order_id, package_identifier}`, where
     * package_identifier is a product id of the bridge's config/products.json.
     *
     * @return array<string, mixed>
     */
    public function changePackage($data, $order_data, $params = [])
    {
        $this->customCall('changePackage', $order_data, $params);
        $package = self::id($params['package_identifier'] ?? null);
        if ($package === null) {
            throw self::info('package_identifier must be a product id of the bridge (letters, digits and . _ : -).');
        }
        return $this->guardedCall(function () use ($order_data, $package): array {
            $order = $this->order($order_data);
            $settings = $this->settings();
            $r = $this->call($settings, 'change-package', ['service_identifier' => $this->serviceId($order, $settings), 'package_identifier' => $package], $order);
            if (!$r['ok']) {
                throw $this->failure('package change', $order, $r);
            }
            return ['done' => true, 'pending' => false, 'message' => 'The licence is now product ' . $package . '.'] + $this->shown($r['data']);
        });
    }

    // ---- the calls behind them ------------------------------------------------------------------

    /** create, accepted only when the licence is active (FOSSBilling then marks the order active). */
    private function create(array $order, array $settings, array $params, string $what): void
    {
        $params += [
            'service_identifier' => $this->serviceId($order, $settings),
            'customer_email' => $order['email'],
            'customer_name' => $order['name'],
        ];
        $r = $this->call($settings, 'create', $params, $order);
        if (!$r['ok']) {
            throw $this->failure($what, $order, $r);
        }
        $status = $r['data']['status'] ?? null;
        if ($status !== 'active') {
            throw self::error(sprintf(
                'LicenseBridge: %s of order #%d: the licence is %s, not active. Run the same action again once the bridge shows it active.',
                $what,
                $order['id'],
                is_string($status) ? $status : 'in an unknown state',
            ));
        }
    }

    /**
     * suspend / unsuspend / terminate. A licence the bridge never had (404) has nothing to suspend
     * or end, so suspend and terminate succeed (a failed order can still be deleted); a terminated
     * one is already suspended. Unsuspending either is an error: the customer would have no licence.
     */
    private function statusCall(string $call, $order_data): bool
    {
        $order = $this->order($order_data);
        $settings = $this->settings();
        $r = $this->call($settings, $call, ['service_identifier' => $this->serviceId($order, $settings)], $order);
        if ($r['ok']) {
            return true;
        }
        $nothingThere = $r['status'] === 404 || $r['code'] === 'service_terminated';
        if ($call !== 'unsuspend' && $nothingThere) {
            $this->log(sprintf('%s of order #%d: nothing to do (%s)', $call, $order['id'], $r['code']));
            return true;
        }
        throw $this->failure($call === 'terminate' ? 'termination' : ($call === 'suspend' ? 'suspension' : 'unsuspension'), $order, $r);
    }

    /** One bridge call; failures are logged (one line), and every call when log_calls is on. */
    private function call(array $settings, string $call, array $params, array $order): array
    {
        $logger = null;
        if ($settings['log_calls']) {
            $logger = function (string $action, array $request, array $response) use ($order): void {
                $this->log(sprintf(
                    'order #%d %s %s -> HTTP %d %s',
                    $order['id'],
                    $action,
                    json_encode($request['params'] ?? [], JSON_UNESCAPED_SLASHES),
                    (int) ($response['status'] ?? 0),
                    substr((string) ($response['body'] ?? ''), 0, 2000),
                ));
            };
        }
        $client = new LicenseBridgeClient($settings['url'], $settings['token'], $settings['timeout'], $logger);
        $r = $call === 'info' ? $client->info($params) : $client->call($call, $params);
        if (!$r['ok']) {
            $this->log(sprintf('order #%d %s: HTTP %d (%s): %s', $order['id'], $call, $r['status'], (string) $r['code'], (string) $r['error']));
        }
        return $r;
    }

    /** The exception for a failed call, for the admin (FOSSBilling shows it and notes it on the order). */
    private function failure(string $what, array $order, array $r): \Exception
    {
        $id = $order['id'];
        $error = (string) $r['error'];
        $code = (string) $r['code'];
        if ($r['pending']) {
            return self::error("LicenseBridge: the {$what} of order #{$id} is still in progress at the bridge. Nothing is lost and nothing is bought twice: run the same action again in a minute to see its outcome.");
        }
        return match (true) {
            $r['status'] === 0 => self::error("LicenseBridge: the bridge could not be reached for the {$what} of order #{$id} ({$error}). Nothing was changed; run the action again once it answers."),
            $r['status'] === 401 => self::error("LicenseBridge: the bridge refused the token (HTTP 401). Check 'token' in library/Plugin/LicenseBridge/config.php against the bridge's PROVISIONING_TOKEN."),
            $r['status'] === 404 => self::error("LicenseBridge: the bridge has no licence for order #{$id} (unknown_service)."),
            $r['status'] === 409 => self::error("LicenseBridge: the bridge is still busy with order #{$id} ({$error}). Run the {$what} again in a minute."),
            $r['status'] === 422 => self::info("LicenseBridge: the bridge refused the {$what} of order #{$id} ({$code}): {$error}"),
            $r['status'] === 502 => self::error("LicenseBridge: the {$what} of order #{$id} was refused upstream ({$code}): {$error}. Nothing is lost: once that is fixed, run the same action again."),
            default => self::error("LicenseBridge: the {$what} of order #{$id} failed: HTTP {$r['status']} ({$code}): {$error}"),
        };
    }

    // ---- guards ---------------------------------------------------------------------------------

    /**
     * Runs a lifecycle action. FOSSBilling calls these with an empty $params; anything else came
     * through servicecustom/call with a differently-cased name ("Suspend"), which FOSSBilling's own
     * check lets through. Any non-FOSSBilling error becomes a FOSSBilling\Exception, because the
     * panel's handlers catch \Exception, not \Error.
     */
    private function guarded(string $method, $params, callable $action): bool
    {
        if ($params !== []) {
            throw self::forbidden($method);
        }
        return $this->guardedCall($action);
    }

    private function guardedCall(callable $action)
    {
        try {
            return $action();
        } catch (\Throwable $e) {
            if (self::isPanelException($e)) {
                throw self::scrubbed($e, $this->secrets);
            }
            $this->log('unexpected ' . get_class($e) . ': ' . $e->getMessage());
            throw self::error('LicenseBridge: unexpected error (' . get_class($e) . '); see the PHP error log.');
        }
    }

    /**
     * The allow-list for customCall. A client request always holds `method` (client/servicecustom/call
     * requires it); an admin one does not. Every parameter must be known and a single value.
     */
    private function customCall(string $method, $order_data, $params): void
    {
        if (!is_array($params)) {
            throw self::forbidden($method);
        }
        $key = strtolower($method);
        $fromClient = array_key_exists('method', $params);
        $allowed = $fromClient ? self::CLIENT_CALLS : self::ADMIN_CALLS;
        if (!array_key_exists($key, $allowed)) {
            throw self::forbidden($method);
        }
        if ($fromClient && (!is_string($params['method']) || strtolower($params['method']) !== $key)) {
            throw self::forbidden($method);
        }
        $known = array_merge(['order_id', 'CSRFToken'], $fromClient ? ['method'] : [], $allowed[$key]);
        foreach ($params as $name => $value) {
            if (!in_array($name, $known, true)) {
                $shown = is_string($name) && preg_match('/^[A-Za-z0-9_-]{1,40}$/', $name) ? "'{$name}'" : 'a parameter';
                throw self::info("LicenseBridge: {$method} does not take {$shown}.");
            }
            if (!is_string($value) && !is_int($value)) {
                throw self::info("LicenseBridge: '{$name}' must be a single value.");
            }
        }
        $orderId = is_array($order_data) ? ($order_data['id'] ?? null) : null;
        if (!isset($params['order_id']) || (string) $params['order_id'] !== (string) $orderId) {
            throw self::forbidden($method);
        }
    }

    // ---- the order, the settings, the terms ---------------------------------------------------

    /**
     * What is used of $order_data: database columns and the client's record (not the order's
     * `config`, which the customer typed).
     *
     * @return array{id: int, product_id: int, period: ?string, expires_at: ?string, email: ?string, name: ?string}
     */
    private function order($order_data): array
    {
        if (!is_array($order_data)) {
            throw self::error('LicenseBridge: FOSSBilling passed no order data.');
        }
        $id = self::positiveInt($order_data['id'] ?? null);
        $productId = self::positiveInt($order_data['product_id'] ?? null);
        if ($id === null || $productId === null) {
            throw self::error('LicenseBridge: the order data has no valid id or product_id.');
        }
        $period = $order_data['period'] ?? null;
        $period = is_string($period) && preg_match('/^[1-9][DWMY]$/i', $period) ? strtoupper($period) : null;
        $expires = $order_data['expires_at'] ?? null;
        $expires = is_string($expires) && strtotime($expires) !== false ? $expires : null;
        $client = is_array($order_data['client'] ?? null) ? $order_data['client'] : [];
        $email = is_string($client['email'] ?? null) && filter_var($client['email'], FILTER_VALIDATE_EMAIL) ? $client['email'] : null;
        $name = trim(implode(' ', array_filter([$client['first_name'] ?? null, $client['last_name'] ?? null], 'is_string')));
        if ($name === '' && is_string($client['company'] ?? null)) {
            $name = trim($client['company']);
        }
        // No control characters, at most 200 characters (cut on a character, not a byte).
        $name = preg_match('/^.{0,200}/su', (string) preg_replace('/[\x00-\x1F\x7F]+/u', ' ', $name), $m) === 1 ? trim($m[0]) : '';
        return ['id' => $id, 'product_id' => $productId, 'period' => $period, 'expires_at' => $expires, 'email' => $email, 'name' => $name !== '' ? $name : null];
    }

    /**
     * The billing cycle of the order's period and the due date FOSSBilling sets when the action
     * succeeds: `$from` (the order's expiry, or now) plus the period.
     *
     * @return array{0: string, 1: string}
     */
    private function term(array $order, ?string $from): array
    {
        $period = $order['period'];
        if ($period === null) {
            throw self::info("LicenseBridge: order #{$order['id']} has no recurring billing period; licence products need one of 1M, 3M, 6M, 1Y, 2Y, 3Y.");
        }
        $qty = (int) $period[0];
        $unit = $period[1];
        $months = $unit === 'M' ? $qty : ($unit === 'Y' ? $qty * 12 : 0);
        if (!isset(self::CYCLES[$months])) {
            throw self::info("LicenseBridge: order #{$order['id']} is billed every {$period}; the bridge's licences run 1M, 3M, 6M, 1Y, 2Y or 3Y.");
        }
        $start = $from !== null ? new \DateTimeImmutable($from) : new \DateTimeImmutable('now');
        $due = $start->modify('+' . $qty . ($unit === 'Y' ? ' years' : ' months'));
        return [self::CYCLES[$months], $due->format(DATE_ATOM)];
    }

    private function serviceId(array $order, array $settings): string
    {
        return $settings['service_prefix'] . $order['id'];
    }

    /** The bridge product of the order's FOSSBilling product, from config.php's `products`. */
    private function packageOf(array $order, array $settings): string
    {
        $package = $settings['products'][(string) $order['product_id']] ?? null;
        if ($package === null) {
            throw self::info("LicenseBridge: FOSSBilling product #{$order['product_id']} has no bridge product: add it to 'products' in library/Plugin/LicenseBridge/config.php.");
        }
        return $package;
    }

    /**
     * The server IP the customer entered in the product's order form (a Form Builder field named
     * by `ip_field`): the service config first (an admin may correct it on the order's tab), then
     * the order's config.
     */
    private function formIp($data, $order_data, array $settings): string
    {
        $field = $settings['ip_field'];
        $value = is_array($data) ? ($data[$field] ?? null) : null;
        if ($value === null || $value === '') {
            $value = $order_data['config'][$field] ?? null;
        }
        $ip = self::ip($value);
        if ($ip === null) {
            $what = is_string($value) && $value !== '' ? 'is not a valid IP address' : 'is missing';
            throw self::info("LicenseBridge: the order's '{$field}' field {$what}. Correct it on the order's service tab, then activate again.");
        }
        return $ip;
    }

    /**
     * config.php beside this file, checked strictly: a typo in a setting's name is an error, not
     * a silently ignored value.
     *
     * @return array{url: string, token: string, products: array<string, string>, timeout: int, ip_field: string, service_prefix: string, log_calls: bool}
     */
    private function settings(): array
    {
        $file = __DIR__ . DIRECTORY_SEPARATOR . 'config.php';
        if (!is_file($file)) {
            throw self::error('LicenseBridge is not configured: copy config.example.php to config.php in library/Plugin/LicenseBridge/ and fill it in.');
        }
        try {
            $raw = (static fn (string $path) => require $path)($file);
        } catch (\Throwable $e) {
            // The parser's message may quote the file's text (the token); only the line is given.
            throw self::error('LicenseBridge: library/Plugin/LicenseBridge/config.php has a PHP error on line ' . $e->getLine() . '.');
        }
        if (!is_array($raw)) {
            throw self::error('LicenseBridge: library/Plugin/LicenseBridge/config.php must return an array.');
        }
        if (is_string($raw['token'] ?? null) && $raw['token'] !== '') {
            $this->secrets = [$raw['token']];
        }
        $problems = [];
        foreach (array_keys($raw) as $name) {
            if (!array_key_exists($name, self::SETTINGS)) {
                $problems[] = 'unknown setting ' . (is_string($name) && preg_match('/^\w{1,40}$/', $name) ? "'{$name}'" : '(unnamed)');
            }
        }
        $s = array_merge(self::SETTINGS, array_intersect_key($raw, self::SETTINGS));

        $url = $s['url'];
        $host = is_string($url) && preg_match('#^https?://[^/?\#\s]+(/[^?\#\s]*)?$#i', $url) ? strtolower((string) parse_url($url, PHP_URL_HOST)) : '';
        if ($host === '' || $host === 'example.com' || str_ends_with($host, '.example.com')) {
            $problems[] = "'url' must be the bridge's address, e.g. https://licenses.yourcompany.com:8080";
        }
        if (!is_string($s['token']) || strlen($s['token']) < 16 || str_contains($s['token'], 'PROVISIONING_TOKEN') || preg_match('/\s/', $s['token'])) {
            $problems[] = "'token' must be the bridge's PROVISIONING_TOKEN";
        }
        $products = [];
        if (!is_array($s['products']) || $s['products'] === []) {
            $problems[] = "'products' must map FOSSBilling product ids to bridge product ids, e.g. [5 => '12']";
        } else {
            foreach ($s['products'] as $fb => $package) {
                $package = self::id($package);
                if (self::positiveInt($fb) === null || $package === null) {
                    $problems[] = "'products' entry " . (is_int($fb) || preg_match('/^[0-9]+$/D', (string) $fb) === 1 ? "#{$fb}" : '(bad key)') . ' must be a FOSSBilling product id => a bridge product id';
                    continue;
                }
                $products[(string) $fb] = $package;
            }
        }
        if (!is_int($s['timeout']) || $s['timeout'] < 5 || $s['timeout'] > 120) {
            $problems[] = "'timeout' must be whole seconds from 5 to 120 (keep it above the bridge's PROVISION_WAIT_SECONDS)";
        }
        if (!is_string($s['ip_field']) || !preg_match('/^[A-Za-z0-9_]{1,64}$/', $s['ip_field'])) {
            $problems[] = "'ip_field' must be the name of the order form's IP field";
        }
        if (!is_string($s['service_prefix']) || !preg_match('/^[A-Za-z0-9_.:-]{0,32}$/', $s['service_prefix'])) {
            $problems[] = "'service_prefix' may hold up to 32 letters, digits and . _ : -";
        }
        if (!is_bool($s['log_calls'])) {
            $problems[] = "'log_calls' must be true or false";
        }
        if ($problems !== []) {
            throw self::error('LicenseBridge: library/Plugin/LicenseBridge/config.php: ' . implode('; ', $problems) . '.');
        }
        $s['url'] = rtrim($s['url'], '/');
        $s['products'] = $products;
        return $s;
    }

    // ---- small helpers ----------------------------------------------------------------------

    /** @return array<string, mixed> */
    private function shown(array $licence): array
    {
        $out = [];
        foreach (self::SHOWN as $key) {
            $value = $licence[$key] ?? null;
            $out[$key] = is_scalar($value) ? $value : null;
        }
        $left = $out['ip_changes_left'];
        $out['can_change_ip'] = $out['status'] === 'active' && ($left === null || (is_int($left) && $left > 0));
        return $out;
    }

    private function log(string $line): void
    {
        error_log('LicenseBridge: ' . LicenseBridgeClient::scrub($line, $this->secrets));
    }

    private static function ip($value): ?string
    {
        if (!is_string($value)) {
            return null;
        }
        $value = trim($value);
        return strlen($value) <= 45 && filter_var($value, FILTER_VALIDATE_IP) !== false ? $value : null;
    }

    private static function id($value): ?string
    {
        if (is_int($value) && $value >= 0) {
            $value = (string) $value;
        }
        return is_string($value) && preg_match(self::ID_PATTERN, $value) ? $value : null;
    }

    private static function positiveInt($value): ?int
    {
        if (is_int($value)) {
            return $value > 0 ? $value : null;
        }
        return is_string($value) && preg_match('/^[1-9][0-9]{0,18}$/', $value) ? (int) $value : null;
    }

    private static function fieldErrors(array $answer): string
    {
        $parts = [];
        foreach ((array) ($answer['errors'] ?? []) as $messages) {
            foreach ((array) $messages as $message) {
                if (is_string($message)) {
                    $parts[] = $message;
                }
            }
        }
        return $parts === [] ? 'it is not valid.' : implode('; ', $parts);
    }

    private static function isPanelException(\Throwable $e): bool
    {
        return class_exists('FOSSBilling\\Exception', false) ? $e instanceof \FOSSBilling\Exception : false;
    }

    /** A panel exception whose message might hold a secret is rebuilt without it (same class and code). */
    private static function scrubbed(\Throwable $e, array $secrets): \Throwable
    {
        $clean = LicenseBridgeClient::scrub($e->getMessage(), $secrets);
        if ($clean === $e->getMessage()) {
            return $e;
        }
        $class = get_class($e);
        return new $class($clean, null, (int) $e->getCode(), true);
    }

    /** An error of the service (FOSSBilling\Exception; `protected` keeps arguments out of its debug stack trace). */
    private static function error(string $message): \Exception
    {
        return class_exists('FOSSBilling\\Exception') ? new \FOSSBilling\Exception($message, null, 0, true) : new \RuntimeException($message);
    }

    /** A refusal the user can act on (FOSSBilling\InformationException: not reported as a system error). */
    private static function info(string $message): \Exception
    {
        return class_exists('FOSSBilling\\InformationException') ? new \FOSSBilling\InformationException($message, null, 0, true) : new \RuntimeException($message);
    }

    /** The same code FOSSBilling uses for its forbidden plug-in methods (the API answers HTTP 403). */
    private static function forbidden(string $method): \Exception
    {
        $shown = preg_match('/^[A-Za-z0-9_]{1,40}$/', $method) ? $method : 'this method';
        $message = "LicenseBridge: {$shown} cannot be called through servicecustom.";
        return class_exists('FOSSBilling\\Exception') ? new \FOSSBilling\Exception($message, null, 403, true) : new \RuntimeException($message, 403);
    }
}
