<?php

declare(strict_types=1);

/**
 * LicenseBridge licences: a FOSSBilling service module (an extension of type "mod"). Its products
 * are of the type "Licensebridge"; each order's licence is bought and managed through
 * license-bridge's provisioning API (service contract, section 8). See
 * integrations/fossbilling/README.md.
 *
 * How FOSSBilling 0.8.5 runs it (nothing here is copied from FOSSBilling, only its calling
 * conventions are followed; file and line references are to tag 0.8.5, commit 544bf2b8):
 *  - the folder modules/Servicelicensebridge/ is found by the Composer autoloader's PSR-4 rule
 *    Box\Mod\ => modules/ (the release's vendor/autoload.php), by absolute path: no include_path;
 *  - the Extensions page lists it (manifest.json) and "Activate" runs install() (Extension\Service
 *    ::activate -> installModule -> FOSSBilling\Module::install), which creates the table;
 *  - an activated module named service<type> is a product type (Product\Service::getTypes);
 *  - the order flows call, for a type that is not built in, <action>($order, $service) with the
 *    order and this module's row as plain RedBean beans (Order\Service::_callOnService):
 *    create() must return the row (its id becomes the order's service_id); an exception from
 *    activate() makes the order failed_setup with the message as a status note, from renew()
 *    failed_renew, from the others leaves the order as it was; the message is the admin's error;
 *  - toApiArray() feeds the order pages and e-mails (Order\Service::getOrderServiceData);
 *  - attachOrderConfig() / validateOrderData() run when the product is put in the cart
 *    (Product\Service::prepareCartProductConfig) and when an admin creates an order;
 *  - the settings (bridge URL, token) are FOSSBilling's extension configuration of
 *    "mod_servicelicensebridge", which FOSSBilling keeps encrypted with the instance's salt
 *    (Extension\Service::setConfig, FOSSBilling\Module::getConfig);
 *  - templates/client and templates/admin are on Twig's path once the module is activated
 *    (Theme\Service::buildThemeConfig), so the order pages include this module's
 *    mod_servicelicensebridge_manage.html.twig with no copy into a theme.
 *
 * The token goes only into the Authorization header (LicenseBridgeClient). It is never returned,
 * put in an exception message, a page or a log line: each of those is scrubbed of it as well.
 * Every exception is a *protected* FOSSBilling exception, so FOSSBilling's debug stack trace
 * prints no argument.
 */

namespace Box\Mod\Servicelicensebridge;

require_once __DIR__ . '/lib/LicenseBridgeClient.php';

class Service implements \FOSSBilling\InjectionAwareInterface
{
    /** The product type (this module's name without "service") and its table, service_<type>. */
    public const TYPE = 'licensebridge';
    public const TABLE = 'service_licensebridge';

    /** FOSSBilling's extension configuration key of this module. */
    public const CONFIG = 'mod_servicelicensebridge';

    /** The settings, with their defaults. */
    private const DEFAULTS = ['url' => '', 'token' => '', 'timeout' => 30, 'service_prefix' => '', 'log_calls' => false];

    /** The licence fields a customer is shown (the bridge's last_error is for the operator). */
    private const SHOWN = ['license_key', 'status', 'ip', 'type', 'variant', 'bundle', 'package_identifier', 'expires_at', 'install_command', 'ip_changes_left'];

    /** Ids as the bridge accepts them (service_identifier, package_identifier). */
    private const ID = '/^[A-Za-z0-9_.:-]{1,64}$/';

    /** Where the operator fixes the settings. */
    private const SETTINGS_PAGE = 'Extensions -> LicenseBridge licences -> Settings';

    private const SCHEMA = <<<'SQL'
        CREATE TABLE IF NOT EXISTS `service_licensebridge` (
          `id` bigint(20) NOT NULL AUTO_INCREMENT,
          `client_id` bigint(20) DEFAULT NULL,
          `order_id` bigint(20) DEFAULT NULL,
          `service_identifier` varchar(64) DEFAULT NULL,
          `package_identifier` varchar(64) DEFAULT NULL,
          `ip` varchar(45) DEFAULT NULL,
          `license_key` varchar(64) DEFAULT NULL,
          `created_at` datetime DEFAULT NULL,
          `updated_at` datetime DEFAULT NULL,
          PRIMARY KEY (`id`),
          UNIQUE KEY `order_id` (`order_id`)
        ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
        SQL;

    protected ?\Pimple\Container $di = null;

    /** @var list<string> What every message and log line is scrubbed of (the token, once read). */
    private array $secrets = [];

    public function setDi(\Pimple\Container $di): void
    {
        $this->di = $di;
    }

    public function getDi(): ?\Pimple\Container
    {
        return $this->di;
    }

    /** Staff permissions (Staff -> a member's permissions): "manage_settings" is FOSSBilling's key for a module's settings page. */
    public function getModulePermissions(): array
    {
        return [
            'manage' => [
                'type' => 'bool',
                'display_name' => __trans('Manage licences'),
                'description' => __trans('Allows the staff member to change a licence\'s IP address or product, and to move orders of the old LicenseBridge plug-in over.'),
            ],
            'manage_settings' => [],
        ];
    }

    // ---- Extensions page ----------------------------------------------------------------------

    /** "Activate" on the Extensions page: the table of the orders' licence records. */
    public function install(): bool
    {
        $this->di['db']->exec(self::SCHEMA);

        return true;
    }

    /** A newer version of the module's files: the table is created if it is missing. */
    public function update(array $manifest): bool
    {
        return $this->install();
    }

    // ---- the cart ---------------------------------------------------------------------------------

    /**
     * Called when the product is put in the cart and when an admin creates an order: an order of
     * a product with no bridge product, or for a period the licences are not sold for, is refused
     * there, before anyone pays. The order's data is returned as it came: nothing of the product
     * is copied into it.
     */
    public function attachOrderConfig($product, array $data): array
    {
        if (self::packageOfConfig($product->getConfig()) === null) {
            $this->log(sprintf('product #%d (%s) was put in a cart, but it has no bridge product: set it on the product\'s Configuration tab.', $product->getId(), (string) $product->getTitle()));

            throw self::info('This product cannot be ordered yet: its licence is not set up. Please contact us.');
        }
        if ($this->cycleOf(is_string($data['period'] ?? null) ? $data['period'] : null) === null) {
            throw self::info('Licences are sold for 1, 3 or 6 months, or 1, 2 or 3 years: please choose one of those billing periods.');
        }

        return $data;
    }

    /** The order form's IP field (templates/client/mod_servicelicensebridge_order_form.html.twig). */
    public function validateOrderData(array &$data): bool
    {
        $ip = \LicenseBridgeRules::ip($data['ip'] ?? null);
        if ($ip === null) {
            throw self::info('Enter the IP address of the server the licence is for (IPv4 or IPv6).');
        }
        $data['ip'] = $ip;

        return true;
    }

    // ---- the order's lifecycle (Order\Service::_callOnService) -------------------------------------

    /**
     * Before the first activation: the order's licence record. No bridge call, and nothing that
     * can fail on the settings or the product: every check is the activation's, whose failure
     * FOSSBilling records on the order (failed_setup and a status note).
     */
    public function create($order, $service = null)
    {
        $row = $this->di['db']->findOne(self::TABLE, 'order_id = :order_id', [':order_id' => $order->id]);
        if (is_object($row)) {
            return $row;
        }
        $row = $this->di['db']->dispense(self::TABLE);
        $row->client_id = $order->client_id;
        $row->order_id = $order->id;
        $row->service_identifier = null;
        $row->package_identifier = null;
        $row->ip = null;
        $row->license_key = null;
        $row->created_at = date('Y-m-d H:i:s');
        $row->updated_at = date('Y-m-d H:i:s');
        $this->di['db']->store($row);

        return $row;
    }

    /**
     * Activation: buys the licence (create). Succeeds only when the licence is active, so
     * FOSSBilling marks the order active only then. Everything is checked before the bridge is
     * called: the settings, the product's bridge product, the period, the order's IP.
     */
    public function activate($order, $service = null): bool
    {
        return $this->guarded(function () use ($order, $service): bool {
            $o = $this->orderData($order);
            $row = $this->rowOf($order, $service);
            if ($row === null) {
                throw self::error("LicenseBridge: order #{$o['id']} has no licence record (FOSSBilling makes it just before the activation). Activate the order again.");
            }
            $settings = $this->settings();
            $package = $this->packageOf($o);
            $cycle = $this->termOf($o);
            $ip = $this->formIp($o);
            if (empty($row->license_key) || empty($row->service_identifier)) {
                // Named by the current settings until the bridge has bought it, then fixed.
                $row->service_identifier = $settings['service_prefix'] . $o['id'];
                $this->di['db']->store($row);
            }
            $from = $o['expires_at'] === null ? time() : (int) strtotime($o['expires_at']);
            $licence = $this->createLicence($o, $settings, (string) $row->service_identifier, [
                'package_identifier' => $package,
                'ip' => $ip,
                'billing_cycle' => $cycle,
                'next_due_date' => $this->dueDate($o['period'], $from),
            ], 'Activate', 'activation');
            $this->remember($row, $licence);

            return true;
        });
    }

    /**
     * Paid renewal (and an admin's Renew): records the payment at the bridge up to the expiry
     * FOSSBilling is about to set (Order\Service::renewFromOrder, with the order module's
     * "renewal logic" setting). Sending the date, not "one more cycle", makes a repeated renew
     * change nothing twice. FOSSBilling makes a renewed order active even when it was suspended
     * (an admin's Renew does not unsuspend first), so a suspended licence is unsuspended too.
     */
    public function renew($order, $service = null): bool
    {
        return $this->guarded(function () use ($order, $service): bool {
            $o = $this->orderData($order);
            $settings = $this->settings();
            $this->termOf($o);
            $target = ['service_identifier' => $this->serviceIdOf($this->rowOf($order, $service), $o, $settings)];
            $r = $this->call($settings, 'renew', $target + ['next_due_date' => $this->dueDate($o['period'], $this->renewalFrom($o))], $o);
            if (!$r['ok']) {
                throw $this->failure($r, $o, 'Renew', 'renewal');
            }
            if (($r['data']['status'] ?? null) === 'suspended') {
                $u = $this->call($settings, 'unsuspend', $target, $o);
                if (!$u['ok']) {
                    throw $this->failure($u, $o, 'Renew', 'renewal');
                }
            }

            return true;
        });
    }

    public function suspend($order, $service = null): bool
    {
        return $this->guarded(fn (): bool => $this->statusCall('suspend', $order, $service, 'Suspend'));
    }

    public function unsuspend($order, $service = null): bool
    {
        return $this->guarded(fn (): bool => $this->statusCall('unsuspend', $order, $service, 'Unsuspend'));
    }

    /** Cancelling the order ends the licence: terminate. */
    public function cancel($order, $service = null): bool
    {
        return $this->guarded(fn (): bool => $this->statusCall('terminate', $order, $service, 'Cancel'));
    }

    /**
     * Un-cancelling orders the licence again: the bridge re-activates a terminated service (it
     * unsuspends the licence the reseller still has, or buys one when it has none). The IP and
     * product are the licence's last ones (the customer may have moved it), else the order's.
     */
    public function uncancel($order, $service = null): bool
    {
        return $this->guarded(function () use ($order, $service): bool {
            $o = $this->orderData($order);
            $settings = $this->settings();
            $row = $this->rowOf($order, $service) ?? $this->create($order);
            $serviceId = $this->serviceIdOf($row, $o, $settings);
            $info = $this->call($settings, 'info', ['service_identifier' => $serviceId], $o);
            if ($info['ok']) {
                $ip = \LicenseBridgeRules::ip($info['data']['ip'] ?? null);
                $package = self::id($info['data']['package_identifier'] ?? null);
            } elseif ($info['status'] === 404) {
                $ip = null;
                $package = null;
            } else {
                throw $this->failure($info, $o, 'Uncancel', 're-activation');
            }
            $cycle = $this->termOf($o);
            $licence = $this->createLicence($o, $settings, $serviceId, [
                'package_identifier' => $package ?? $this->packageOf($o),
                'ip' => $ip ?? $this->formIp($o),
                'billing_cycle' => $cycle,
                'next_due_date' => $this->dueDate($o['period'], time()),
            ], 'Uncancel', 're-activation');
            $row->service_identifier = $serviceId;
            $this->remember($row, $licence);

            return true;
        });
    }

    /** Deleting the order ends the licence (nothing to end when the bridge never had it), then its record. */
    public function delete($order, $service = null): bool
    {
        return $this->guarded(function () use ($order, $service): bool {
            $row = $this->rowOf($order, $service);
            if ($row === null) {
                return true;
            }
            $this->statusCall('terminate', $order, $row, 'Delete');
            $this->di['db']->trash($row);

            return true;
        });
    }

    /** The order's licence record, for FOSSBilling's order pages and e-mails: no bridge call, no secret. */
    public function toApiArray($model, $deep = true, $identity = null): array
    {
        return [
            'id' => (int) $model->id,
            'order_id' => (int) $model->order_id,
            'service_identifier' => $model->service_identifier,
            'package_identifier' => $model->package_identifier,
            'ip' => $model->ip,
            'license_key' => $model->license_key,
            'created_at' => $model->created_at,
            'updated_at' => $model->updated_at,
        ];
    }

    // ---- the order pages (Api\Client, Api\Admin) --------------------------------------------------------

    /** The client's own active order of this type (as FOSSBilling's Servicecustom checks its client calls). */
    public function clientOrder($orderId, $client): object
    {
        $order = $this->di['db']->findOne('ClientOrder', 'id = :id AND client_id = :client_id', [':id' => (int) $orderId, ':client_id' => $client->id]);
        if (!$order instanceof \Model_ClientOrder || $order->service_type !== self::TYPE) {
            throw self::info('Order not found');
        }
        $this->di['mod_service']('order')->assertOrderUsable($order);
        if ($order->status !== \Model_ClientOrder::STATUS_ACTIVE) {
            throw self::info('Order is not activated');
        }

        return $order;
    }

    public function adminOrder($orderId): object
    {
        $order = $this->di['db']->getExistingModelById('ClientOrder', (int) $orderId, 'Order not found');
        if ($order->service_type !== self::TYPE) {
            throw self::info("Order #{$order->id} is not a LicenseBridge licence (its type is {$order->service_type}).");
        }

        return $order;
    }

    /**
     * The licence for the order page: key, status, IP, install command, IP changes left. Never
     * throws for a bridge failure (the page calls it while it renders): `available: false` and a
     * message instead.
     */
    public function licence($order): array
    {
        $unavailable = ['available' => false, 'message' => 'The licence details are not available right now. Please try again later.'];
        try {
            $o = $this->orderData($order);
            $settings = $this->settings();
            $r = $this->call($settings, 'info', ['service_identifier' => $this->serviceIdOf($this->rowOf($order, null), $o, $settings)], $o);
        } catch (\Throwable $e) {
            $this->log('licence details of order #' . (int) $order->id . ' not read: ' . $e->getMessage());

            return $unavailable;
        }
        if ($r['ok']) {
            return ['available' => true, 'message' => null] + self::shown($r['data']);
        }
        if ($r['status'] === 404) {
            return ['available' => false, 'message' => 'No licence has been set up for this service yet.'];
        }

        return $unavailable;
    }

    /**
     * The customer's (or an admin's) IP change, within the product's max_ip_changes. A refusal
     * is a FOSSBilling\InformationException with a message for the customer; a change the bridge
     * is still applying answers `pending: true`.
     */
    public function changeIp($order, $newIp, bool $byAdmin = false): array
    {
        $ip = \LicenseBridgeRules::ip(is_string($newIp) ? $newIp : null);
        if ($ip === null) {
            throw self::info('Enter a valid IPv4 or IPv6 address.');
        }

        return $this->guarded(function () use ($order, $ip, $byAdmin): array {
            $o = $this->orderData($order);
            $settings = $this->settings();
            $row = $this->rowOf($order, null);
            $r = $this->call($settings, 'change-ip', ['service_identifier' => $this->serviceIdOf($row, $o, $settings), 'new_ip' => $ip], $o);
            if ($r['ok']) {
                if ($row !== null) {
                    $this->remember($row, $r['data']);
                }

                return ['done' => true, 'pending' => false, 'message' => 'The licence now runs on ' . $ip . '.'] + self::shown($r['data']);
            }
            if ($r['pending']) {
                return ['done' => false, 'pending' => true, 'message' => 'The IP change to ' . $ip . ' is being applied; it shows here within a few minutes. There is no need to send it again.'];
            }
            if ($byAdmin) {
                throw $this->failure($r, $o, 'Change IP', 'IP change');
            }

            throw match ($r['code']) {
                'ip_change_limit' => self::info('No IP changes are left for this licence: all the changes its product allows have been used. Please contact support.'),
                'ip_in_use' => self::info($ip . ' already has a licence of this kind. Please choose another IP address or contact support.'),
                'ip_unusable' => self::info($ip . ' cannot be licensed (it is a private, reserved or otherwise unusable address).'),
                'service_terminated' => self::info('This licence has ended, so its IP address cannot be changed.'),
                'validation' => self::info('The IP address was refused: ' . self::fieldErrors($r['data'])),
                default => $this->logged(self::error('The IP address could not be changed right now. Please try again later or contact support.'), $r, $o),
            };
        });
    }

    /**
     * An admin's package change (e.g. LiteSpeed 13 -> 14): FOSSBilling has no package-change
     * action for a service module (its "upgrade" is a support ticket), so the admin's service
     * tab calls this. package_identifier is a product id of the bridge's config/products.json.
     */
    public function changePackage($order, $package): array
    {
        $package = self::id($package);
        if ($package === null) {
            throw self::info('package_identifier must be a product id of the bridge (letters, digits and . _ : -).');
        }

        return $this->guarded(function () use ($order, $package): array {
            $o = $this->orderData($order);
            $settings = $this->settings();
            $row = $this->rowOf($order, null);
            $r = $this->call($settings, 'change-package', ['service_identifier' => $this->serviceIdOf($row, $o, $settings), 'package_identifier' => $package], $o);
            if (!$r['ok']) {
                throw $this->failure($r, $o, 'Change package', 'package change');
            }
            if ($row !== null) {
                $this->remember($row, $r['data']);
            }

            return ['done' => true, 'pending' => false, 'message' => 'The licence is now product ' . $package . '.'] + self::shown($r['data']);
        });
    }

    /**
     * Moves an order of the old Servicecustom plug-in (library/Plugin/LicenseBridge) over to this
     * module, keeping its licence: the bridge must have the licence under the same
     * service_identifier the plug-in used (its service_prefix + the order id). Nothing is bought.
     */
    public function adoptCustomOrder($orderId): array
    {
        return $this->guarded(function () use ($orderId): array {
            $order = $this->di['db']->getExistingModelById('ClientOrder', (int) $orderId, 'Order not found');
            if ($order->service_type !== 'custom') {
                throw self::info("Order #{$order->id} is not an order of a Custom product (its type is {$order->service_type}).");
            }
            $custom = $this->di['mod_service']('order')->getOrderService($order);
            if (!is_object($custom) || $custom->plugin !== 'LicenseBridge') {
                throw self::info("Order #{$order->id} is not an order of the LicenseBridge plug-in.");
            }
            $o = $this->orderData($order);
            $settings = $this->settings();
            $serviceId = $settings['service_prefix'] . $o['id'];
            $r = $this->call($settings, 'info', ['service_identifier' => $serviceId], $o);
            if ($r['status'] === 404) {
                throw self::info("The bridge has no licence for order #{$o['id']} as '{$serviceId}'. Set the service prefix the old plug-in's config.php had, then try again. Nothing was changed.");
            }
            if (!$r['ok']) {
                throw $this->failure($r, $o, 'Move over', 'move-over');
            }
            $row = $this->create($order);
            $row->service_identifier = $serviceId;
            $this->remember($row, $r['data']);
            $order->service_type = self::TYPE;
            $order->service_id = $row->id;
            $order->updated_at = date('Y-m-d H:i:s');
            $this->di['db']->store($order);
            $this->di['db']->trash($custom);
            $this->log(sprintf('order #%d moved over from the Servicecustom plug-in (service_identifier %s)', $o['id'], $serviceId));

            return $this->toApiArray($row);
        });
    }

    // ---- settings (templates/admin/mod_servicelicensebridge_settings.html.twig) --------------------------

    /** The settings as the settings page shows them: never the token, only whether one is saved. */
    public function getSettings(): array
    {
        $s = $this->storedSettings();

        return ['url' => $s['url'], 'token_set' => $s['token'] !== '', 'timeout' => $s['timeout'], 'service_prefix' => $s['service_prefix'], 'log_calls' => $s['log_calls']];
    }

    /**
     * Saves the settings into FOSSBilling's encrypted extension configuration. A setting not sent
     * and a blank token keep what is saved; a wrong value is refused, naming the setting (never
     * echoing the token).
     */
    public function saveSettings(array $data): bool
    {
        $new = $this->storedSettings();
        if (array_key_exists('url', $data)) {
            $new['url'] = is_string($data['url']) ? rtrim(trim($data['url']), '/') : null;
        }
        if (($data['token'] ?? '') !== '') {
            $new['token'] = is_string($data['token']) ? $data['token'] : null;
        }
        if (array_key_exists('timeout', $data)) {
            $timeout = is_scalar($data['timeout']) ? trim((string) $data['timeout']) : null;
            $new['timeout'] = $timeout === '' ? self::DEFAULTS['timeout'] : (is_string($timeout) && preg_match('/^\d{1,3}$/', $timeout) === 1 ? (int) $timeout : null);
        }
        if (array_key_exists('service_prefix', $data)) {
            $new['service_prefix'] = is_scalar($data['service_prefix']) ? trim((string) $data['service_prefix']) : null;
        }
        if (array_key_exists('log_calls', $data)) {
            $flag = is_scalar($data['log_calls']) ? strtolower(trim((string) $data['log_calls'])) : null;
            $new['log_calls'] = in_array($flag, ['1', 'true', 'on', 'yes'], true) ? true : (in_array($flag, ['0', 'false', 'off', 'no', ''], true) ? false : null);
        }
        if (is_string($new['token']) && $new['token'] !== '') {
            $this->secrets = [$new['token']];
        }
        $problems = self::settingsProblems($new);
        if ($problems !== []) {
            throw self::info('LicenseBridge settings not saved: ' . implode('; ', $problems) . '.');
        }
        $this->di['mod_service']('extension')->setConfig(['ext' => self::CONFIG] + $new);

        return true;
    }

    /** The settings page's "Test connection": one harmless info call. */
    public function testConnection(): array
    {
        $settings = $this->settings();
        $r = $this->client($settings, null)->info(['service_identifier' => 'license-bridge-connection-test']);
        if ($r['ok'] || $r['status'] === 404) {
            return ['ok' => true, 'message' => 'The bridge at ' . $settings['url'] . ' answered and accepted the token.'];
        }

        return ['ok' => false, 'message' => $this->scrub('LicenseBridge: ' . \LicenseBridgeMessages::failure($r, 'Test connection') . self::where($r))];
    }

    // ---- the calls behind them ----------------------------------------------------------------------

    /** create, accepted only when the licence is active. */
    private function createLicence(array $o, array $settings, string $serviceId, array $params, string $action, string $noun): array
    {
        $client = $this->di['db']->getExistingModelById('Client', $o['client_id'], 'Client not found');
        $email = is_string($client->email) && filter_var($client->email, FILTER_VALIDATE_EMAIL) ? $client->email : null;
        $name = trim(implode(' ', array_filter([$client->first_name, $client->last_name], 'is_string')));
        if ($name === '' && is_string($client->company)) {
            $name = $client->company;
        }
        $r = $this->call($settings, 'create', $params + ['service_identifier' => $serviceId, 'customer_email' => $email, 'customer_name' => $name], $o);
        if (!$r['ok']) {
            throw $this->failure($r, $o, $action, $noun);
        }
        $status = $r['data']['status'] ?? null;
        if ($status !== 'active') {
            throw self::error(sprintf(
                'LicenseBridge: %s of order #%d: the licence is %s, not active. Nothing was bought twice; run %s again once the bridge shows it active.',
                $noun,
                $o['id'],
                is_string($status) ? $status : 'in an unknown state',
                $action,
            ));
        }

        return $r['data'];
    }

    /**
     * suspend / unsuspend / terminate. A licence the bridge never had (404) has nothing to suspend
     * or end, so suspend and terminate succeed (a failed order can still be deleted); a terminated
     * one is already suspended. Unsuspending either is an error: the customer would have no licence.
     */
    private function statusCall(string $call, $order, $service, string $action): bool
    {
        $o = $this->orderData($order);
        $settings = $this->settings();
        $r = $this->call($settings, $call, ['service_identifier' => $this->serviceIdOf($this->rowOf($order, $service), $o, $settings)], $o);
        if ($r['ok']) {
            return true;
        }
        if ($call !== 'unsuspend' && ($r['status'] === 404 || $r['code'] === 'service_terminated')) {
            $this->log(sprintf('%s of order #%d: nothing to do (%s)', $call, $o['id'], (string) $r['code']));

            return true;
        }

        throw $this->failure($r, $o, $action, $call === 'terminate' ? 'termination' : ($call === 'suspend' ? 'suspension' : 'unsuspension'));
    }

    /** One bridge call; a failure is logged (one line), and every call when log_calls is on. */
    private function call(array $settings, string $call, array $params, array $o): array
    {
        $r = $this->client($settings, $o)->call($call, $params, $call === 'info' ? 'GET' : 'POST');
        if (!$r['ok']) {
            $this->log(sprintf('order #%d %s: HTTP %d (%s): %s', $o['id'], $call, $r['status'], (string) $r['code'], (string) $r['error']));
        }

        return $r;
    }

    private function client(array $settings, ?array $o): \LicenseBridgeClient
    {
        $logger = null;
        if ($settings['log_calls']) {
            $logger = function (string $action, array $request, array $response) use ($o): void {
                $this->log(sprintf(
                    '%s %s %s -> HTTP %d %s',
                    $o === null ? 'settings' : 'order #' . $o['id'],
                    $action,
                    json_encode($request['params'] ?? [], JSON_UNESCAPED_SLASHES),
                    (int) ($response['status'] ?? 0),
                    substr((string) ($response['body'] ?? ''), 0, 2000),
                ));
            };
        }

        return new \LicenseBridgeClient($settings['url'], $settings['token'], $settings['timeout'], $logger, 'fossbilling');
    }

    /**
     * The exception for a failed call: the bridge's error and code, what to do (the shared
     * LicenseBridgeMessages), and for a 202 that the work goes on and a repeat is safe. A refusal
     * of the request (422) is an InformationException; the rest are errors of the service.
     */
    private function failure(array $r, array $o, string $action, string $noun): \Exception
    {
        if ($r['pending']) {
            return self::error('LicenseBridge: order #' . $o['id'] . ': ' . \LicenseBridgeMessages::pending($noun, (string) $r['error']));
        }
        $message = $this->scrub(sprintf('LicenseBridge: %s of order #%d failed: %s%s', $noun, $o['id'], \LicenseBridgeMessages::failure($r, $action), self::where($r)));

        return $r['status'] === 422 ? self::info($message) : self::error($message);
    }

    /** For the codes whose fix is in this module's settings: where they are. */
    private static function where(array $r): string
    {
        return in_array($r['code'], ['unauthorized', 'forbidden', 'unreachable'], true) ? ' (FOSSBilling: ' . self::SETTINGS_PAGE . '.)' : '';
    }

    /** A customer-facing error whose cause the operator finds in the PHP error log. */
    private function logged(\Exception $e, array $r, array $o): \Exception
    {
        $this->log(sprintf('order #%d: %s', $o['id'], \LicenseBridgeMessages::failure($r, 'Change IP')));

        return $e;
    }

    // ---- the order, the settings, the terms ------------------------------------------------------

    /**
     * What is used of the order: its columns (RedBean gives strings), its form data (the customer
     * typed it: only the IP is taken from it, and validated).
     *
     * @return array{id: int, client_id: int, product_id: int, period: ?string, expires_at: ?string, config: array}
     */
    private function orderData($order): array
    {
        $id = (int) $order->id;
        if ($id <= 0) {
            throw self::error('LicenseBridge: FOSSBilling passed no order.');
        }
        $expires = $order->expires_at;
        $config = json_decode((string) $order->config, true);

        return [
            'id' => $id,
            'client_id' => (int) $order->client_id,
            'product_id' => (int) $order->product_id,
            'period' => is_string($order->period) && $order->period !== '' ? $order->period : null,
            'expires_at' => is_string($expires) && $expires !== '' && strtotime($expires) !== false ? $expires : null,
            'config' => is_array($config) ? $config : [],
        ];
    }

    /** The order's licence record: the bean FOSSBilling passed, else the row of the order. */
    private function rowOf($order, $service): ?object
    {
        if (is_object($service) && (int) $service->id > 0) {
            return $service;
        }
        $row = $this->di['db']->findOne(self::TABLE, 'order_id = :order_id', [':order_id' => $order->id]);

        return is_object($row) ? $row : null;
    }

    private function serviceIdOf(?object $row, array $o, array $settings): string
    {
        return $row !== null && is_string($row->service_identifier) && $row->service_identifier !== '' ? $row->service_identifier : $settings['service_prefix'] . $o['id'];
    }

    /** What the bridge answered, kept on the record for the order pages (nothing secret). */
    private function remember(object $row, array $licence): void
    {
        foreach (['package_identifier', 'ip', 'license_key'] as $field) {
            if (is_string($licence[$field] ?? null) && $licence[$field] !== '') {
                $row->$field = $licence[$field];
            }
        }
        $row->updated_at = date('Y-m-d H:i:s');
        $this->di['db']->store($row);
    }

    /** The bridge product of the order's FOSSBilling product (its Configuration tab). */
    private function packageOf(array $o): string
    {
        $product = $this->di['mod_service']('product')->findProductById($o['product_id']);
        $package = self::packageOfConfig($product->getConfig());
        if ($package === null) {
            throw self::info(sprintf(
                'LicenseBridge: product #%d "%s" has no bridge product, so nothing was bought for order #%d. Set "Bridge product" on the product\'s Configuration tab (Products -> the product -> Configuration), then Activate the order again.',
                $o['product_id'],
                (string) $product->getTitle(),
                $o['id'],
            ));
        }

        return $package;
    }

    private static function packageOfConfig(?string $json): ?string
    {
        $config = json_decode((string) $json, true);

        return self::id(is_array($config) ? ($config['package_identifier'] ?? null) : null);
    }

    /** The bridge's billing cycle of a FOSSBilling period ("1M", "1Y", ...), or null for one the licences are not sold for. */
    private function cycleOf(?string $period): ?string
    {
        if ($period === null) {
            return null;
        }
        try {
            $p = $this->di['period']($period);
        } catch (\Exception) {
            return null;
        }
        $months = match ($p->getUnit()) {
            'M' => $p->getQty(),
            'Y' => $p->getQty() * 12,
            default => 0,
        };
        $cycle = \LicenseBridgeRules::cycle($months);

        return is_string($cycle) ? $cycle : null;
    }

    private function termOf(array $o): string
    {
        $cycle = $this->cycleOf($o['period']);
        if ($cycle === null) {
            throw self::info(sprintf(
                'LicenseBridge: order #%d is %s; the bridge\'s licences run 1, 3 or 6 months, or 1, 2 or 3 years (1M, 3M, 6M, 1Y, 2Y, 3Y). Nothing was bought.',
                $o['id'],
                $o['period'] === null ? 'not billed by a recurring period' : 'billed every ' . $o['period'],
            ));
        }

        return $cycle;
    }

    /** The expiry FOSSBilling sets: one period from $from (Box_Period::getExpirationTime). */
    private function dueDate(?string $period, int $from): string
    {
        return date(DATE_ATOM, (int) $this->di['period']((string) $period)->getExpirationTime($from));
    }

    /** Where Order\Service::renewFromOrder counts the new period from: the expiry, or its "renewal logic" setting. */
    private function renewalFrom(array $o): int
    {
        $expires = $o['expires_at'] === null ? null : (int) strtotime($o['expires_at']);
        $config = $this->di['mod_config']('order');
        $logic = is_array($config) ? ($config['order_renewal_logic'] ?? '') : '';

        return match (true) {
            $logic === 'from_today', $expires === null => time(),
            $logic === 'from_greater' => max($expires, time()),
            default => $expires,
        };
    }

    /** The server IP the customer entered in the order form (validated in the cart; checked again). */
    private function formIp(array $o): string
    {
        $value = $o['config']['ip'] ?? null;
        $ip = \LicenseBridgeRules::ip($value);
        if ($ip === null) {
            $what = is_scalar($value) && (string) $value !== '' ? 'is not a valid IP address' : 'is missing';
            throw self::info("LicenseBridge: the IP address of order #{$o['id']} {$what}, so nothing was bought. Correct the order's 'ip' (admin API order/update_config), then Activate the order again.");
        }

        return $ip;
    }

    /** FOSSBilling's stored configuration of this module, with defaults (unchecked). */
    private function storedSettings(): array
    {
        $raw = $this->di['mod_config']('servicelicensebridge');
        $s = array_merge(self::DEFAULTS, array_intersect_key(is_array($raw) ? $raw : [], self::DEFAULTS));
        if (is_string($s['token']) && $s['token'] !== '') {
            $this->secrets = [$s['token']];
        }

        return $s;
    }

    /** @return array{url: string, token: string, timeout: int, service_prefix: string, log_calls: bool} */
    private function settings(): array
    {
        $s = $this->storedSettings();
        $problems = self::settingsProblems($s);
        if ($problems !== []) {
            throw self::error('LicenseBridge is not set up: ' . implode('; ', $problems) . '. Set it in ' . self::SETTINGS_PAGE . '.');
        }

        return $s;
    }

    /** @return list<string> */
    private static function settingsProblems(array $s): array
    {
        $problems = [];
        $url = $s['url'];
        $host = is_string($url) && preg_match('#^https?://[^/?\#\s]+(/[^?\#\s]*)?$#i', $url) === 1 ? strtolower((string) parse_url($url, PHP_URL_HOST)) : '';
        if ($host === '' || $host === 'example.com' || str_ends_with($host, '.example.com')) {
            $problems[] = "'Bridge URL' must be the bridge's address, e.g. http://127.0.0.1:8080";
        }
        if (!is_string($s['token']) || strlen($s['token']) < 16 || preg_match('/\s/', $s['token']) === 1) {
            $problems[] = "'Token' must be the bridge's PROVISIONING_TOKEN";
        }
        if (!is_int($s['timeout']) || $s['timeout'] < 5 || $s['timeout'] > 120) {
            $problems[] = "'Timeout' must be whole seconds from 5 to 120 (above the bridge's PROVISION_WAIT_SECONDS)";
        }
        if (!is_string($s['service_prefix']) || preg_match('/^[A-Za-z0-9_.:-]{0,32}$/', $s['service_prefix']) !== 1) {
            $problems[] = "'Service prefix' may hold up to 32 letters, digits and . _ : -";
        }
        if (!is_bool($s['log_calls'])) {
            $problems[] = "'Log every call' must be on or off";
        }

        return $problems;
    }

    // ---- small helpers ---------------------------------------------------------------------------------

    /**
     * Runs an action. A FOSSBilling exception goes on (scrubbed of the token); anything else
     * becomes one, because FOSSBilling's handlers catch \Exception, not \Error.
     */
    private function guarded(callable $action)
    {
        try {
            return $action();
        } catch (\FOSSBilling\Exception $e) {
            $clean = $this->scrub($e->getMessage());
            if ($clean === $e->getMessage()) {
                throw $e;
            }
            $class = get_class($e);

            throw new $class($clean, null, (int) $e->getCode(), true);
        } catch (\Throwable $e) {
            $this->log('unexpected ' . get_class($e) . ': ' . $e->getMessage());

            throw self::error($this->scrub('LicenseBridge: unexpected ' . get_class($e) . ': ' . $e->getMessage()));
        }
    }

    /** @return array<string, mixed> */
    private static function shown(array $licence): array
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
        error_log('LicenseBridge: ' . $this->scrub($line));
    }

    private function scrub(string $text): string
    {
        return \LicenseBridgeClient::scrub($text, $this->secrets);
    }

    private static function id($value): ?string
    {
        if (is_int($value) && $value >= 0) {
            $value = (string) $value;
        }

        return is_string($value) && preg_match(self::ID, $value) === 1 ? $value : null;
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

    /** An error of the service; protected: FOSSBilling's debug stack trace prints no argument. */
    private static function error(string $message): \Exception
    {
        return new \FOSSBilling\Exception($message, null, 0, true);
    }

    /** A refusal the user can act on (not reported as a system error). */
    private static function info(string $message): \Exception
    {
        return new \FOSSBilling\InformationException($message, null, 0, true);
    }
}
