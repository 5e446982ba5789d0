<?php
/**
 * license-bridge provisioning module for Blesta.
 *
 * Sells software licences (cPanel, LiteSpeed, CloudLinux, ...) through a license-bridge
 * service: every Blesta service action becomes one synchronous call of the bridge's
 * provisioning API (/provision/v1, service contract section 8), and every failure becomes
 * Blesta's own error (Input errors), so nothing is marked done that the bridge did not do.
 *
 * Blesta's layout and conventions (see README.md, "Sources"): the folder
 * components/modules/license_bridge/ holds this class (LicenseBridge extends Module), config.json,
 * language/en_us/license_bridge.php and views/default/*.pdt. The bridge is a module row (URL
 * parts and the PROVISIONING_TOKEN, the token stored encrypted); the package holds the bridge's
 * product id; the service holds the licence's IP and what the bridge answered.
 *
 * The token is only ever in the Authorization header (the shared client does that). It is never
 * logged, put in an error message, rendered in a page or returned as a service field.
 */

require_once __DIR__ . DIRECTORY_SEPARATOR . 'lib' . DIRECTORY_SEPARATOR . 'LicenseBridgeClient.php';

#[\AllowDynamicProperties]
class LicenseBridge extends Module
{
    /** Service field: the licence's IP address (shown as the service's name, config.json service.name_key). */
    private const FIELD_IP = 'license_ip';
    /** Service field: the name the bridge knows this service by (its service_identifier), stored once bought. */
    private const FIELD_REF = 'license_ref';
    /** Service field: the bridge's licence key (license_key), accepted by every call. */
    private const FIELD_KEY = 'license_key';
    /** Service field: the install command, for the welcome e-mail tag {service.license_install_command}. */
    private const FIELD_COMMAND = 'license_install_command';

    /**
     * Admin add form only (never stored): a one-time token in a hidden field, posted again with the
     * form, so that adding the same service again after an error names the same order.
     */
    private const FIELD_ADD_TOKEN = 'license_add_token';
    private const ADD_TOKEN_PATTERN = '/^[0-9a-f]{32}$/D';
    /** The name earlier versions of this module stored at order time (blesta- and 24 random hex digits). */
    private const LEGACY_REF_PATTERN = '/^blesta-[0-9a-f]{24}$/D';
    /** A product id of the bridge's catalogue (the bridge's own id rule). */
    private const PRODUCT_PATTERN = '/^[A-Za-z0-9_.:-]{1,64}$/';

    /** Seconds for calls that change something: above the bridge's PROVISION_WAIT_SECONDS (default 20). */
    private const TIMEOUT_CHANGE = 30;
    /** Seconds for reads shown on a page (service info, tabs, the connection test). */
    private const TIMEOUT_READ = 10;

    /** The service_identifier the connection test asks about; the bridge answers 404 when the token is right. */
    private const PROBE_SERVICE = 'blesta-connection-test';

    /** Months per unit of a Blesta pricing period; other periods (day, week, onetime) are no licence term. */
    private const PERIOD_MONTHS = ['month' => 1, 'year' => 12];

    /**
     * Blesta's name for each bridge call, as the shared hints say it ("run Activate again").
     */
    private const ACTION_NAMES = [
        'create' => 'Activate',
        'suspend' => 'Suspend',
        'unsuspend' => 'Unsuspend',
        'terminate' => 'Cancel',
        'renew' => 'Renew',
        'change-ip' => 'Change IP',
        'change-package' => 'Change Package',
        'info' => 'the page',
    ];

    /**
     * Initializes the module: language, the Input component, config.json.
     */
    public function __construct()
    {
        Language::loadLang('license_bridge', null, dirname(__FILE__) . DS . 'language' . DS);
        Loader::loadComponents($this, ['Input']);
        $this->loadConfig(dirname(__FILE__) . DS . 'config.json');
    }

    /**
     * The module needs PHP's curl extension (the shared client uses it).
     */
    public function install()
    {
        if (!extension_loaded('curl')) {
            $this->Input->setErrors(['curl' => ['unavailable' => Language::_('LicenseBridge.!error.curl.unavailable', true)]]);
        }
    }

    /**
     * Nothing to migrate yet.
     *
     * @param string $current_version The installed version
     */
    public function upgrade($current_version)
    {
    }

    // ---------------------------------------------------------------------------------------
    // Module rows: the bridge (URL parts and the token)
    // ---------------------------------------------------------------------------------------

    /**
     * The module page: the bridges (rows) and groups.
     *
     * @param stdClass $module The module with its rows and groups
     * @param array $vars Post data
     * @return string HTML
     */
    public function manageModule($module, array &$vars)
    {
        $this->view = $this->makeView('manage');
        Loader::loadHelpers($this, ['Form', 'Html', 'Widget']);

        $rows = [];
        foreach ((isset($module->rows) ? $module->rows : []) as $row) {
            $rows[] = (object) [
                'id' => $row->id,
                'name' => isset($row->meta->name) ? $row->meta->name : '',
                'url' => $this->rowBaseUrl($row->meta),
            ];
        }
        $this->view->set('module', $module);
        $this->view->set('rows', $rows);

        return $this->view->fetch();
    }

    /**
     * The form to add a bridge.
     *
     * @param array $vars Post data (to refill the form after an error)
     * @return string HTML
     */
    public function manageAddRow(array &$vars)
    {
        $this->view = $this->makeView('add_row');
        Loader::loadHelpers($this, ['Form', 'Html', 'Widget']);

        // The token is never sent back to the browser, not even the one just typed.
        $shown = $vars;
        unset($shown['token']);
        $this->view->set('vars', (object) $shown);
        $this->view->set('schemes', $this->schemes());

        return $this->view->fetch();
    }

    /**
     * The form to edit a bridge. The token field stays empty: leaving it empty keeps the
     * stored token, so the token never reaches a page.
     *
     * @param stdClass $module_row The row
     * @param array $vars Post data (to refill the form after an error)
     * @return string HTML
     */
    public function manageEditRow($module_row, array &$vars)
    {
        $this->view = $this->makeView('edit_row');
        Loader::loadHelpers($this, ['Form', 'Html', 'Widget']);

        $shown = empty($vars) ? (array) $module_row->meta : $vars;
        unset($shown['token']);
        $this->view->set('vars', (object) $shown);
        $this->view->set('schemes', $this->schemes());

        return $this->view->fetch();
    }

    /**
     * Validates a new bridge, tests the connection with its token, and returns the row's meta
     * (the token encrypted by Blesta).
     *
     * @param array $vars name, scheme, host, port, token
     * @return array|null Meta fields [key, value, encrypted], or null with Input errors
     */
    public function addModuleRow(array &$vars)
    {
        return $this->guarded('none', function () use (&$vars) {
            return $this->saveRow($vars, null);
        });
    }

    /**
     * Validates changes to a bridge (an empty token keeps the stored one), tests the connection,
     * and returns the row's meta.
     *
     * @param stdClass $module_row The row
     * @param array $vars name, scheme, host, port, token
     * @return array|null Meta fields, or null with Input errors
     */
    public function editModuleRow($module_row, array &$vars)
    {
        return $this->guarded('none', function () use ($module_row, &$vars) {
            return $this->saveRow($vars, $module_row);
        });
    }

    /**
     * @see addModuleRow() (no row yet) and editModuleRow()
     *
     * @param array $vars name, scheme, host, port, token
     * @param stdClass|null $module_row The row being edited, null for a new one
     * @return array|null Meta fields, or null with Input errors
     */
    private function saveRow(array &$vars, $module_row)
    {
        $row = $this->rowInput($vars, $module_row);
        $this->Input->setRules($this->getRowRules($module_row === null));
        if (!$this->Input->validates($row)) {
            return null;
        }
        if (($problem = $this->testConnection($row)) !== null) {
            $this->Input->setErrors(['token' => ['connection' => $problem]]);
            return null;
        }

        return $this->rowMeta($row);
    }

    /**
     * Group order methods; Module::selectModuleRow() implements both.
     *
     * @return array
     */
    public function getGroupOrderOptions()
    {
        return [
            'first' => Language::_('LicenseBridge.order_options.first', true),
            'roundrobin' => Language::_('LicenseBridge.order_options.roundrobin', true),
        ];
    }

    /**
     * Validates a hostname or IP address typed as the bridge's host (no scheme, path or credentials).
     *
     * @param string $host
     * @return bool
     */
    public function validateHost($host)
    {
        if (!is_string($host) || $host === '' || strlen($host) > 253) {
            return false;
        }
        if (filter_var(trim($host, '[]'), FILTER_VALIDATE_IP) !== false) {
            return true;
        }

        return (bool) preg_match('/^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/', $host);
    }

    /**
     * Validates an optional TCP port.
     *
     * @param string $port
     * @return bool
     */
    public function validatePort($port)
    {
        $port = trim((string) $port);

        return $port === '' || (preg_match('/^[0-9]+$/D', $port) === 1 && (int) $port >= 1 && (int) $port <= 65535);
    }

    // ---------------------------------------------------------------------------------------
    // Packages: the bridge's product id
    // ---------------------------------------------------------------------------------------

    /**
     * The package's field: the bridge product id (package_identifier); blank means the Blesta
     * package id.
     *
     * @param stdClass $vars Post data
     * @return ModuleFields
     */
    public function getPackageFields($vars = null)
    {
        Loader::loadHelpers($this, ['Html']);
        $fields = new ModuleFields();

        $meta = (isset($vars->meta) && is_array($vars->meta)) ? $vars->meta : [];
        $label = $fields->label(Language::_('LicenseBridge.package_fields.package_identifier', true), 'license_bridge_package_identifier');
        $label->attach(
            $fields->fieldText(
                'meta[package_identifier]',
                isset($meta['package_identifier']) ? $meta['package_identifier'] : null,
                ['id' => 'license_bridge_package_identifier']
            )
        );
        $label->attach($fields->tooltip(Language::_('LicenseBridge.package_fields.tooltip.package_identifier', true)));
        $fields->setField($label);

        return $fields;
    }

    /**
     * Validates the package's product id and returns the package meta.
     *
     * @param array $vars The package, with meta[package_identifier]
     * @return array|null Meta fields
     */
    public function addPackage(?array $vars = null)
    {
        return $this->packageMeta((array) $vars);
    }

    /**
     * Validates the package's product id and returns the package meta.
     *
     * @param stdClass $package The package
     * @param array $vars The package, with meta[package_identifier]
     * @return array|null Meta fields
     */
    public function editPackage($package, ?array $vars = null)
    {
        return $this->packageMeta((array) $vars);
    }

    /**
     * Validates a product id typed in the package (blank is allowed).
     *
     * @param string $id
     * @return bool
     */
    public function validateProductId($id)
    {
        $id = trim((string) $id);

        return $id === '' || (bool) preg_match(self::PRODUCT_PATTERN, $id);
    }

    // ---------------------------------------------------------------------------------------
    // Service fields: the IP address
    // ---------------------------------------------------------------------------------------

    /**
     * Admin's "add service" fields: the IP, and a one-time token (hidden) that the form posts again
     * on a re-submit, so that adding the same service again after an error names the same order
     * (see serviceIdentifier()). Blesta shows these fields on a pending service's page too; there
     * the token is ignored, since activation names the service by its id.
     *
     * @param stdClass $package The package
     * @param stdClass $vars Post data
     * @return ModuleFields
     */
    public function getAdminAddFields($package, $vars = null)
    {
        $fields = $this->ipFields($vars, 'LicenseBridge.service_field.tooltip.license_ip_admin');
        $token = isset($vars->{self::FIELD_ADD_TOKEN}) && is_string($vars->{self::FIELD_ADD_TOKEN})
            && preg_match(self::ADD_TOKEN_PATTERN, $vars->{self::FIELD_ADD_TOKEN}) ? $vars->{self::FIELD_ADD_TOKEN} : bin2hex(random_bytes(16));
        $fields->setField($fields->fieldHidden(self::FIELD_ADD_TOKEN, $token, ['id' => 'license_bridge_license_add_token']));

        return $fields;
    }

    /**
     * The order form's field: the IP the licence is for.
     *
     * @param stdClass $package The package
     * @param stdClass $vars Post data
     * @return ModuleFields
     */
    public function getClientAddFields($package, $vars = null)
    {
        return $this->ipFields($vars, 'LicenseBridge.service_field.tooltip.license_ip');
    }

    /**
     * Admin's "edit service" fields: the IP (a change moves the licence with change-ip).
     *
     * @param stdClass $package The package
     * @param stdClass $vars The service's fields
     * @return ModuleFields
     */
    public function getAdminEditFields($package, $vars = null)
    {
        return $this->ipFields($vars, 'LicenseBridge.service_field.tooltip.license_ip_admin');
    }

    /**
     * Customers change the IP in the "Licence" tab (within the product's limit), not here.
     *
     * @param stdClass $package The package
     * @param stdClass $vars The service's fields
     * @return ModuleFields
     */
    public function getClientEditFields($package, $vars = null)
    {
        return new ModuleFields();
    }

    /**
     * Validates the service's IP (required, IPv4 or IPv6). Whether the bridge accepts the
     * address (private ranges, one licence per IP) is the bridge's call, made when provisioning.
     *
     * @param stdClass $package The package
     * @param array $vars license_ip
     * @return bool
     */
    public function validateService($package, ?array $vars = null)
    {
        $vars = (array) $vars;
        $this->Input->setRules($this->getServiceRules(false));

        return $this->Input->validates($vars);
    }

    /**
     * Validates a changed IP (when one is given).
     *
     * @param stdClass $service The service
     * @param array $vars license_ip
     * @return bool
     */
    public function validateServiceEdit($service, ?array $vars = null)
    {
        $vars = (array) $vars;
        $this->Input->setRules($this->getServiceRules(true));

        return $this->Input->validates($vars);
    }

    /**
     * An IPv4 or IPv6 address (the shared rule; whether it may hold a licence is the bridge's call).
     *
     * @param string $ip
     * @return bool
     */
    public function validateIp($ip)
    {
        return is_string($ip) && \LicenseBridgeRules::ip($ip) !== null;
    }

    // ---------------------------------------------------------------------------------------
    // Service lifecycle
    // ---------------------------------------------------------------------------------------

    /**
     * Adds a service. Blesta calls this for every new service, pending ones included, and again
     * when a pending service is activated (after payment, or by an admin). The bridge is called
     * only when Blesta asks for provisioning (use_module 'true'); a refused or unfinished
     * purchase is an Input error, so Blesta neither stores nor activates the service and tries
     * again later. The retry names the same service at the bridge (serviceIdentifier(): derived
     * from what Blesta passes every time, never from a field only this module stored), so it
     * continues the same order and nothing is bought twice.
     *
     * @param stdClass $package The package
     * @param array $vars license_ip, use_module, client_id, pricing_id, date_renews, stored fields
     * @param stdClass $parent_package Unused
     * @param stdClass $parent_service Unused
     * @param string $status The service's status
     * @return array|null Every service field, or null with Input errors
     */
    public function addService($package, ?array $vars = null, $parent_package = null, $parent_service = null, $status = 'pending')
    {
        return $this->guarded('none', function () use ($package, $vars, $parent_package, $parent_service, $status) {
            return $this->doAddService($package, $vars, $parent_package, $parent_service, $status);
        });
    }

    /**
     * @see addService()
     */
    private function doAddService($package, ?array $vars = null, $parent_package = null, $parent_service = null, $status = 'pending')
    {
        $vars = (array) $vars;
        if (isset($vars[self::FIELD_IP]) && is_string($vars[self::FIELD_IP])) {
            $vars[self::FIELD_IP] = trim($vars[self::FIELD_IP]);
        }
        if (!$this->validateService($package, $vars)) {
            return null;
        }

        $fields = [
            self::FIELD_IP => $vars[self::FIELD_IP],
            // The bridge's name is known once it has the licence (the answer's service_identifier).
            self::FIELD_REF => '',
            self::FIELD_KEY => '',
            self::FIELD_COMMAND => '',
        ];
        if (!$this->usesModule($vars)) {
            return $this->fieldList($fields);
        }

        $client = $this->clientFor($vars);
        if ($client === null) {
            return null;
        }
        $cycle = $this->cycleFor($package, isset($vars['pricing_id']) ? $vars['pricing_id'] : null);
        if ($cycle === null) {
            return null;
        }
        $params = [
            'service_identifier' => $this->serviceIdentifier($package, $vars, $fields[self::FIELD_IP]),
            'package_identifier' => $this->productOf($package),
            'ip' => $fields[self::FIELD_IP],
            // An address the bridge would refuse is left out rather than failing the purchase.
            'customer_email' => isset($client->email) && filter_var((string) $client->email, FILTER_VALIDATE_EMAIL) !== false
                ? (string) $client->email : null,
            'customer_name' => $this->customerName($client),
            'billing_cycle' => $cycle,
            'next_due_date' => $this->isoDate(isset($vars['date_renews']) ? $vars['date_renews'] : null),
        ];

        $result = $this->call('create', $params, self::TIMEOUT_CHANGE);
        if ($result === null) {
            return null;
        }
        if (!$result['ok']) {
            $this->fail('create', $result);
            return null;
        }
        if (($result['data']['status'] ?? null) !== 'active') {
            $this->setError('create', 'not_active', Language::_('LicenseBridge.!error.create.not_active', true, (string) ($result['data']['status'] ?? '?')));
            return null;
        }

        return $this->fieldList($this->withLicence($fields, $result['data']));
    }

    /**
     * Edits a service. A new IP moves the licence (change-ip) when Blesta asks for provisioning
     * and the licence exists; otherwise the IP is only recorded. Returns every field: Blesta
     * replaces all of a service's fields with what this returns.
     *
     * @param stdClass $package The package
     * @param stdClass $service The service
     * @param array $vars license_ip, use_module
     * @param stdClass $parent_package Unused
     * @param stdClass $parent_service Unused
     * @return array|null Every service field, or null with Input errors
     */
    public function editService($package, $service, ?array $vars = null, $parent_package = null, $parent_service = null)
    {
        return $this->guarded('none', function () use ($package, $service, $vars, $parent_package, $parent_service) {
            return $this->doEditService($package, $service, $vars, $parent_package, $parent_service);
        });
    }

    /**
     * @see editService()
     */
    private function doEditService($package, $service, ?array $vars = null, $parent_package = null, $parent_service = null)
    {
        $vars = (array) $vars;
        if (isset($vars[self::FIELD_IP]) && is_string($vars[self::FIELD_IP])) {
            $vars[self::FIELD_IP] = trim($vars[self::FIELD_IP]);
        }
        if (!$this->validateServiceEdit($service, $vars)) {
            return null;
        }

        $fields = $this->storedFields($service);
        $newIp = isset($vars[self::FIELD_IP]) && $vars[self::FIELD_IP] !== '' ? $vars[self::FIELD_IP] : null;
        if ($newIp === null || $this->sameIp($newIp, (string) ($fields[self::FIELD_IP] ?? ''))) {
            return $this->fieldList($fields, $service);
        }
        if (!$this->usesModule($vars) || ($fields[self::FIELD_KEY] ?? '') === '') {
            // Not provisioned yet (or Blesta said not to use the module): the IP is the one to order.
            $fields[self::FIELD_IP] = $newIp;
            return $this->fieldList($fields, $service);
        }

        $result = $this->call('change-ip', $this->target($fields) + ['new_ip' => $newIp], self::TIMEOUT_CHANGE);
        if ($result === null) {
            return null;
        }
        if (!$result['ok']) {
            $this->fail('change-ip', $result);
            return null;
        }

        return $this->fieldList($this->withLicence($fields, $result['data']), $service);
    }

    /**
     * Suspends the licence.
     *
     * @param stdClass $package The package
     * @param stdClass $service The service
     * @param stdClass $parent_package Unused
     * @param stdClass $parent_service Unused
     * @return array|null Every service field, or null with Input errors
     */
    public function suspendService($package, $service, $parent_package = null, $parent_service = null)
    {
        return $this->guarded('none', function () use ($package, $service, $parent_package, $parent_service) {
            return $this->doSuspendService($package, $service, $parent_package, $parent_service);
        });
    }

    /**
     * @see suspendService()
     */
    private function doSuspendService($package, $service, $parent_package = null, $parent_service = null)
    {
        return $this->licenceCall('suspend', $service, []);
    }

    /**
     * Unsuspends the licence.
     *
     * @param stdClass $package The package
     * @param stdClass $service The service
     * @param stdClass $parent_package Unused
     * @param stdClass $parent_service Unused
     * @return array|null Every service field, or null with Input errors
     */
    public function unsuspendService($package, $service, $parent_package = null, $parent_service = null)
    {
        return $this->guarded('none', function () use ($package, $service, $parent_package, $parent_service) {
            return $this->doUnsuspendService($package, $service, $parent_package, $parent_service);
        });
    }

    /**
     * @see unsuspendService()
     */
    private function doUnsuspendService($package, $service, $parent_package = null, $parent_service = null)
    {
        return $this->licenceCall('unsuspend', $service, []);
    }

    /**
     * Terminates the licence (Blesta calls this when the cancellation takes effect, not when it
     * is scheduled). A service the bridge never had is cancelled in Blesta with nothing to do.
     *
     * @param stdClass $package The package
     * @param stdClass $service The service
     * @param stdClass $parent_package Unused
     * @param stdClass $parent_service Unused
     * @return array|null Every service field, or null with Input errors
     */
    public function cancelService($package, $service, $parent_package = null, $parent_service = null)
    {
        return $this->guarded('none', function () use ($package, $service, $parent_package, $parent_service) {
            return $this->doCancelService($package, $service, $parent_package, $parent_service);
        });
    }

    /**
     * @see cancelService()
     */
    private function doCancelService($package, $service, $parent_package = null, $parent_service = null)
    {
        return $this->licenceCall('terminate', $service, []);
    }

    /**
     * Records the paid renewal: the licence is paid until the service's next renew date (Blesta
     * moved date_renews forward when it invoiced the renewal; this runs once that invoice is
     * paid). Sending the date makes a repeated call harmless.
     *
     * @param stdClass $package The package
     * @param stdClass $service The service
     * @param stdClass $parent_package Unused
     * @param stdClass $parent_service Unused
     * @return array|null Every service field, or null with Input errors
     */
    public function renewService($package, $service, $parent_package = null, $parent_service = null)
    {
        return $this->guarded('none', function () use ($package, $service, $parent_package, $parent_service) {
            return $this->doRenewService($package, $service, $parent_package, $parent_service);
        });
    }

    /**
     * @see renewService()
     */
    private function doRenewService($package, $service, $parent_package = null, $parent_service = null)
    {
        $due = $this->isoDate(isset($service->date_renews) ? $service->date_renews : null);

        return $this->licenceCall('renew', $service, ['next_due_date' => $due]);
    }

    /**
     * Moves the licence to the new package's product (change-package). Nothing to do when both
     * packages name the same product (e.g. only the term changed).
     *
     * @param stdClass $package_from The current package
     * @param stdClass $package_to The new package
     * @param stdClass $service The service
     * @param stdClass $parent_package Unused
     * @param stdClass $parent_service Unused
     * @return array|null Every service field, or null with Input errors
     */
    public function changeServicePackage($package_from, $package_to, $service, $parent_package = null, $parent_service = null)
    {
        return $this->guarded('none', function () use ($package_from, $package_to, $service, $parent_package, $parent_service) {
            return $this->doChangeServicePackage($package_from, $package_to, $service, $parent_package, $parent_service);
        });
    }

    /**
     * @see changeServicePackage()
     */
    private function doChangeServicePackage($package_from, $package_to, $service, $parent_package = null, $parent_service = null)
    {
        $to = $this->productOf($package_to);
        if ($to === $this->productOf($package_from)) {
            return null;
        }

        return $this->licenceCall('change-package', $service, ['package_identifier' => $to]);
    }

    // ---------------------------------------------------------------------------------------
    // What admins and customers see
    // ---------------------------------------------------------------------------------------

    /**
     * The licence under the service row in the admin area: status, IP, key, install command.
     *
     * @param stdClass $service The service
     * @param stdClass $package The package
     * @return string HTML
     */
    public function getAdminServiceInfo($service, $package)
    {
        return $this->guarded('html', function () use ($service, $package) {
            return $this->doGetAdminServiceInfo($service, $package);
        });
    }

    /**
     * @see getAdminServiceInfo()
     */
    private function doGetAdminServiceInfo($service, $package)
    {
        return $this->serviceInfo('admin_service_info', $service, $package);
    }

    /**
     * The licence under the service row in the client area: status, IP, install command.
     *
     * @param stdClass $service The service
     * @param stdClass $package The package
     * @return string HTML
     */
    public function getClientServiceInfo($service, $package)
    {
        return $this->guarded('html', function () use ($service, $package) {
            return $this->doGetClientServiceInfo($service, $package);
        });
    }

    /**
     * @see getClientServiceInfo()
     */
    private function doGetClientServiceInfo($service, $package)
    {
        return $this->serviceInfo('client_service_info', $service, $package);
    }

    /**
     * The customer's tab.
     *
     * @param stdClass $package The package
     * @return array
     */
    public function getClientTabs($package)
    {
        return [
            'tabClientLicence' => ['name' => Language::_('LicenseBridge.tab_client_licence', true), 'icon' => 'fas fa-key'],
        ];
    }

    /**
     * The customer's "Licence" tab: the licence, its install command, and the form to move it to
     * another IP (within the product's limit of IP changes).
     *
     * @param stdClass $package The package
     * @param stdClass $service The service
     * @param array $get GET parameters
     * @param array $post POST parameters: new_ip
     * @param array $files Unused
     * @return string HTML
     */
    public function tabClientLicence($package, $service, ?array $get = null, ?array $post = null, ?array $files = null)
    {
        return $this->guarded('html', function () use ($package, $service, $get, $post, $files) {
            return $this->doTabClientLicence($package, $service, $get, $post, $files);
        });
    }

    /**
     * @see tabClientLicence()
     */
    private function doTabClientLicence($package, $service, ?array $get = null, ?array $post = null, ?array $files = null)
    {
        $this->view = $this->makeView('tab_client_licence');
        Loader::loadHelpers($this, ['Form', 'Html']);

        $vars = new stdClass();
        // A change refused for its limit has just read the licence: the page shows that read.
        $read = null;
        if (is_array($post) && array_key_exists('new_ip', $post)) {
            $vars->new_ip = is_string($post['new_ip']) ? trim($post['new_ip']) : '';
            $changed = $this->customerChangeIp($service, $vars->new_ip, $read);
            if ($changed !== null) {
                $service = $changed;
                $vars = new stdClass();
            }
        }

        $licence = $this->showLicence($service, $read);
        $this->view->set('can_change', $licence !== null && ($service->status ?? '') === 'active'
            && ($licence->ip_changes_left === null || (int) $licence->ip_changes_left > 0));
        $this->view->set('vars', $vars);

        return $this->view->fetch();
    }

    // ---------------------------------------------------------------------------------------
    // Internals
    // ---------------------------------------------------------------------------------------

    /**
     * Runs a Blesta-facing method so that nothing it throws breaks Blesta's request: an
     * unexpected error becomes Blesta's error (or a note on a page), without the token.
     *
     * @param string $fallback 'html' for a page (returns a note), else returns null with an Input error
     * @param callable $work
     * @return mixed
     */
    private function guarded($fallback, callable $work)
    {
        try {
            return $work();
        } catch (\Throwable $e) {
            $message = Language::_('LicenseBridge.!error.internal', true, $this->safeText(get_class($e) . ': ' . $e->getMessage()));
            if ($fallback === 'html') {
                return '<p class="text-danger">' . htmlspecialchars($message, ENT_QUOTES, 'UTF-8') . '</p>';
            }
            $this->setError('license_bridge', 'internal', $message);

            return null;
        }
    }

    /**
     * The customer's IP change: checks what can be checked here (an IP, an active service, IP
     * changes left), then edits the service the way Blesta does (Services::edit, which calls
     * editService and stores its fields). Errors land in this module's Input errors.
     *
     * @param stdClass $service The service
     * @param string $newIp The IP typed by the customer
     * @param array|null $read Set to the licence as read when the change is refused for having
     *  no IP changes left (nothing was sent, so the page can show that read)
     * @return stdClass|null The service as stored afterwards, or null when nothing changed
     */
    private function customerChangeIp($service, $newIp, ?array &$read = null)
    {
        if (!$this->validateIp($newIp)) {
            $this->setError(self::FIELD_IP, 'valid', Language::_('LicenseBridge.!error.license_ip.valid', true));
            return null;
        }
        if (($service->status ?? '') !== 'active') {
            $this->setError(self::FIELD_IP, 'not_active', Language::_('LicenseBridge.!error.change_ip.not_active', true));
            return null;
        }
        $fields = $this->storedFields($service);
        if (!$this->hasLicence($service, $fields)) {
            $this->setError(self::FIELD_IP, 'no_licence', Language::_('LicenseBridge.!error.no_licence', true));
            return null;
        }
        if ($this->sameIp($newIp, (string) ($fields[self::FIELD_IP] ?? ''))) {
            $this->setError(self::FIELD_IP, 'same', Language::_('LicenseBridge.!error.change_ip.same', true));
            return null;
        }
        $current = $this->readLicence($fields);
        $left = $current['licence']->ip_changes_left ?? null;
        if ($current['licence'] !== null && $left !== null && (int) $left <= 0) {
            $this->setError(self::FIELD_IP, 'ip_change_limit', Language::_('LicenseBridge.!error.change_ip.limit', true));
            $read = $current;
            return null;
        }

        Loader::loadModels($this, ['Services']);
        $this->Services->edit($service->id, [self::FIELD_IP => $newIp]);
        if (($errors = $this->Services->errors())) {
            if (isset($errors['api']['ip_in_use'])) {
                // The bridge's answer names the service holding that IP: not for a customer's eyes.
                $errors = [self::FIELD_IP => ['ip_in_use' => Language::_('LicenseBridge.!error.change_ip.in_use', true)]];
            }
            $this->Input->setErrors($errors);
            return null;
        }
        $this->setMessage('success', Language::_('LicenseBridge.!success.change_ip', true, $newIp));
        $updated = $this->Services->get($service->id);

        return $updated ?: null;
    }

    /**
     * One call about an existing licence (suspend, unsuspend, terminate, renew, change-package):
     * returns every field refreshed from the bridge's answer, or null with Input errors.
     *
     * @param string $call
     * @param stdClass $service
     * @param array $params Extra parameters
     * @return array|null
     */
    private function licenceCall($call, $service, array $params)
    {
        $fields = $this->storedFields($service);
        if (!$this->hasLicence($service, $fields)) {
            if ($call === 'terminate') {
                // Nothing was ever provisioned through the module: nothing to terminate.
                return null;
            }
            $this->setError('license_bridge', 'no_licence', Language::_('LicenseBridge.!error.no_licence', true));
            return null;
        }

        $result = $this->call($call, $this->target($fields) + $params, self::TIMEOUT_CHANGE);
        if ($result === null) {
            return null;
        }
        if (!$result['ok']) {
            if ($call === 'terminate' && $result['code'] === 'unknown_service') {
                // The bridge has no such licence: there is nothing left to terminate.
                return null;
            }
            $this->fail($call, $result);
            return null;
        }

        return $this->fieldList($this->withLicence($fields, $result['data']), $service);
    }

    /**
     * The service info views: the stored fields and, for a provisioned service, the licence as
     * the bridge sees it now.
     *
     * @param string $view
     * @param stdClass $service
     * @param stdClass $package
     * @return string HTML
     */
    private function serviceInfo($view, $service, $package)
    {
        $this->view = $this->makeView($view);
        Loader::loadHelpers($this, ['Form', 'Html']);

        $this->showLicence($service);
        $this->view->set('package', $package);
        $this->view->set('product', $this->productOf($package));

        return $this->view->fetch();
    }

    /**
     * Sets service, service_fields, licence and problem on the view: the licence as the bridge
     * has it (read now unless `$read` is a read of it already made), and returns the licence.
     *
     * @param stdClass $service
     * @param array|null $read A result of readLicence() for this service
     * @return stdClass|null
     */
    private function showLicence($service, ?array $read = null)
    {
        $fields = $this->storedFields($service);
        if ($read === null && $this->hasLicence($service, $fields)) {
            $read = $this->readLicence($fields);
        }
        $this->view->set('service', $service);
        $this->view->set('service_fields', (object) $fields);
        $this->view->set('licence', $read['licence'] ?? null);
        $this->view->set('problem', $read['problem'] ?? null);

        return $read['licence'] ?? null;
    }

    /**
     * The licence from the bridge's info call, or a readable problem.
     *
     * @param array $fields Stored service fields
     * @return array ['licence' => stdClass|null, 'problem' => string|null]
     */
    private function readLicence(array $fields)
    {
        // A page only shows a problem; it sets no Input error.
        $client = $this->rowClient(self::TIMEOUT_READ);
        if ($client === null) {
            return ['licence' => null, 'problem' => Language::_('LicenseBridge.!error.module_row.missing', true)];
        }
        $result = $client->call('info', $this->target($fields), 'GET');
        if (!$result['ok']) {
            return ['licence' => null, 'problem' => $this->describe('info', $result)];
        }
        $data = $result['data'];

        return [
            'licence' => (object) [
                'license_key' => (string) ($data['license_key'] ?? ''),
                'service_identifier' => (string) ($data['service_identifier'] ?? ''),
                'package_identifier' => (string) ($data['package_identifier'] ?? ''),
                'status' => (string) ($data['status'] ?? ''),
                'ip' => (string) ($data['ip'] ?? ''),
                'type' => isset($data['type']) ? (string) $data['type'] : (isset($data['bundle']) ? (string) $data['bundle'] : ''),
                'expires_at' => isset($data['expires_at']) ? (string) $data['expires_at'] : null,
                'paid_until' => isset($data['paid_until']) ? (string) $data['paid_until'] : null,
                'install_command' => isset($data['install_command']) ? (string) $data['install_command'] : null,
                'ip_changes_left' => array_key_exists('ip_changes_left', $data) && $data['ip_changes_left'] !== null
                    ? (int) $data['ip_changes_left'] : null,
                'last_error' => isset($data['last_error']) ? (string) $data['last_error'] : null,
            ],
            'problem' => null,
        ];
    }

    /**
     * Makes one call of the provisioning API with the service's bridge (module row). Returns the
     * shared client's result, or null with an Input error when no bridge is set.
     *
     * @param string $call
     * @param array $params
     * @param int $timeout
     * @return array|null
     */
    private function call($call, array $params, $timeout)
    {
        $client = $this->rowClient($timeout);
        if ($client === null) {
            $this->setError('module_row', 'missing', Language::_('LicenseBridge.!error.module_row.missing', true));
            return null;
        }

        // Changes only: reads go through readLicence() with GET.
        return $client->call($call, $params, 'POST');
    }

    /**
     * The shared client for the bridge Blesta set for this call (the service's module row), or
     * null when there is none.
     *
     * @param int $timeout
     * @return LicenseBridgeClient|null
     */
    private function rowClient($timeout)
    {
        $row = $this->getModuleRow();
        if (!$row || !isset($row->meta) || !$this->rowComplete($row->meta)) {
            return null;
        }

        return $this->client($row->meta, $timeout);
    }

    /**
     * The shared client for a bridge; its logger writes Blesta's module log, the token removed
     * by the client and again here.
     *
     * @param stdClass|array $meta The row's meta (decrypted by Blesta)
     * @param int $timeout
     * @return LicenseBridgeClient
     */
    private function client($meta, $timeout)
    {
        $meta = (object) $meta;
        $token = (string) $meta->token;
        $logger = function ($action, array $request, array $response) use ($token) {
            $url = LicenseBridgeClient::scrub((string) ($request['url'] ?? $action), [$token]);
            $sent = LicenseBridgeClient::scrub(
                (string) json_encode(['method' => $request['method'] ?? null, 'params' => $request['params'] ?? []], JSON_UNESCAPED_SLASHES),
                [$token]
            );
            $status = (int) ($response['status'] ?? 0);
            $received = LicenseBridgeClient::scrub('HTTP ' . $status . ' ' . (string) ($response['body'] ?? ''), [$token]);
            $this->writeLog($url, $sent, 'input', true);
            $this->writeLog($url, $received, 'output', $status === 200);
        };

        return new LicenseBridgeClient($this->rowBaseUrl($meta), $token, (int) $timeout, $logger, 'blesta');
    }

    /**
     * Module::log(), which throws when Blesta cannot store the line: a log must never break
     * the panel's action.
     *
     * @param string $url
     * @param string $data
     * @param string $direction
     * @param bool $success
     */
    private function writeLog($url, $data, $direction, $success)
    {
        try {
            $this->log($url, $data, $direction, $success);
        } catch (\Throwable $e) {
            // Nothing to do: the call itself already happened.
        }
    }

    /**
     * The connection test of a row being saved: an info call about a service that does not exist.
     * The bridge answers 404 unknown_service when the URL and the token are right.
     *
     * @param array $row name, scheme, host, port, token
     * @return string|null A problem, or null when the bridge answered with the token accepted
     */
    private function testConnection(array $row)
    {
        $client = $this->client($row, self::TIMEOUT_READ);
        $result = $client->call('info', ['service_identifier' => self::PROBE_SERVICE], 'GET');
        if ($result['ok'] || $result['code'] === 'unknown_service') {
            return null;
        }
        if ($result['code'] === 'unauthorized') {
            return Language::_('LicenseBridge.!error.token.unauthorized', true);
        }
        if ($result['status'] === 0) {
            return Language::_('LicenseBridge.!error.connection.unreachable', true, $this->safeText((string) $result['error'], $row['token']));
        }

        return Language::_('LicenseBridge.!error.connection.answer', true, (int) $result['status'], $this->safeText((string) $result['error'], $row['token']));
    }

    /**
     * Sets Blesta's error for a failed call; the inner key is the bridge's code.
     *
     * @param string $call
     * @param array $result The client's result
     */
    private function fail($call, array $result)
    {
        $this->setError('api', (string) ($result['code'] ?? 'error'), $this->describe($call, $result));
    }

    /**
     * A readable sentence for a failed call, without the token: the bridge's error and code and
     * what to do about it, in the words every module shares (LicenseBridgeMessages, generated from
     * the bridge's own list), naming the Blesta action to repeat.
     *
     * @param string $call
     * @param array $result
     * @return string
     */
    private function describe($call, array $result)
    {
        $action = self::ACTION_NAMES[$call] ?? $call;
        $result['error'] = $this->safeText((string) ($result['error'] ?? ''));
        if (!empty($result['pending'])) {
            return Language::_('LicenseBridge.!error.call', true, $action, \LicenseBridgeMessages::pending($action, $result['error']));
        }
        if (($result['code'] ?? null) === 'ip_change_limit') {
            return Language::_('LicenseBridge.!error.change_ip.limit', true);
        }

        return Language::_('LicenseBridge.!error.call', true, $action, \LicenseBridgeMessages::failure($result, $action));
    }

    /**
     * Adds one Input error, keeping those already set.
     *
     * @param string $field
     * @param string $rule
     * @param string $message
     */
    private function setError($field, $rule, $message)
    {
        $errors = $this->Input->errors();
        $errors = is_array($errors) ? $errors : [];
        $errors[$field][$rule] = $message;
        $this->Input->setErrors($errors);
    }

    /**
     * Text for a page or an error, with every row token of this module removed.
     *
     * @param string $text
     * @param string|null $token Also remove this one (a row being saved)
     * @return string
     */
    private function safeText($text, $token = null)
    {
        $secrets = [];
        if ($token !== null) {
            $secrets[] = (string) $token;
        }
        $row = $this->getModuleRow();
        if ($row && isset($row->meta->token)) {
            $secrets[] = (string) $row->meta->token;
        }

        return LicenseBridgeClient::scrub($text, $secrets);
    }

    /**
     * The licence target of a call: the licence key once known, else the service's name at the bridge.
     *
     * @param array $fields
     * @return array
     */
    private function target(array $fields)
    {
        if (($fields[self::FIELD_KEY] ?? '') !== '') {
            return ['license_key' => (string) $fields[self::FIELD_KEY]];
        }

        return ['service_identifier' => (string) ($fields[self::FIELD_REF] ?? '')];
    }

    /**
     * Whether the bridge was asked for this service's licence.
     *
     * @param stdClass $service
     * @param array $fields
     * @return bool
     */
    private function hasLicence($service, array $fields)
    {
        if (($fields[self::FIELD_KEY] ?? '') !== '') {
            return true;
        }
        // A licence ordered but not stored (a pending answer) is still known by its name.
        return ($fields[self::FIELD_REF] ?? '') !== '' && ($service->status ?? 'pending') !== 'pending';
    }

    /**
     * The fields after a successful answer: the bridge's IP, key and install command.
     *
     * @param array $fields
     * @param array $data The licence as the bridge answered it
     * @return array
     */
    private function withLicence(array $fields, array $data)
    {
        if (isset($data['ip']) && is_string($data['ip']) && $data['ip'] !== '') {
            $fields[self::FIELD_IP] = $data['ip'];
        }
        if (isset($data['license_key']) && is_string($data['license_key']) && $data['license_key'] !== '') {
            $fields[self::FIELD_KEY] = $data['license_key'];
        }
        if (isset($data['service_identifier']) && is_string($data['service_identifier']) && $data['service_identifier'] !== '') {
            $fields[self::FIELD_REF] = $data['service_identifier'];
        }
        // The bridge gives the command of an active licence only: a suspended one keeps the last known.
        if (isset($data['install_command']) && is_string($data['install_command']) && $data['install_command'] !== '') {
            $fields[self::FIELD_COMMAND] = $data['install_command'];
        }

        return $fields;
    }

    /**
     * The service's stored fields as key => value (Blesta gives them decrypted).
     *
     * @param stdClass $service
     * @return array
     */
    private function storedFields($service)
    {
        $fields = (array) $this->serviceFieldsToObject(isset($service->fields) ? (array) $service->fields : []);
        foreach ([self::FIELD_IP, self::FIELD_REF, self::FIELD_KEY, self::FIELD_COMMAND] as $key) {
            if (!isset($fields[$key]) || !is_string($fields[$key])) {
                $fields[$key] = isset($fields[$key]) && is_scalar($fields[$key]) ? (string) $fields[$key] : '';
            }
        }

        return $fields;
    }

    /**
     * Fields in Blesta's return form. Every field is returned, fields of other origin included,
     * since Blesta replaces all of a service's fields with this list; each keeps its encryption.
     *
     * @param array $fields key => value
     * @param stdClass|null $service The service whose fields' encryption to keep
     * @return array
     */
    private function fieldList(array $fields, $service = null)
    {
        $encrypted = [];
        foreach ((array) (isset($service->fields) ? $service->fields : []) as $field) {
            $field = (object) $field;
            if (isset($field->key)) {
                $encrypted[$field->key] = !empty($field->encrypted) ? 1 : 0;
            }
        }
        $list = [];
        foreach ($fields as $key => $value) {
            $list[] = ['key' => $key, 'value' => $value, 'encrypted' => $encrypted[$key] ?? 0];
        }

        return $list;
    }

    /**
     * The IP fields shared by the add and edit forms.
     *
     * @param stdClass|null $vars
     * @param string $tooltip Language key
     * @return ModuleFields
     */
    private function ipFields($vars, $tooltip)
    {
        Loader::loadHelpers($this, ['Html']);
        $fields = new ModuleFields();
        $label = $fields->label(Language::_('LicenseBridge.service_fields.license_ip', true), 'license_bridge_license_ip');
        $label->attach(
            $fields->fieldText(
                self::FIELD_IP,
                isset($vars->{self::FIELD_IP}) ? $vars->{self::FIELD_IP} : null,
                ['id' => 'license_bridge_license_ip']
            )
        );
        $label->attach($fields->tooltip(Language::_($tooltip, true)));
        $fields->setField($label);

        return $fields;
    }

    /**
     * The service rules: the IP is required on add and checked when given on edit.
     *
     * @param bool $edit
     * @return array
     */
    private function getServiceRules($edit)
    {
        return [
            self::FIELD_IP => [
                'valid' => [
                    'if_set' => $edit,
                    'rule' => [[$this, 'validateIp']],
                    'message' => Language::_('LicenseBridge.!error.license_ip.valid', true),
                ],
            ],
        ];
    }

    /**
     * The row rules.
     *
     * @param bool $add A new row needs a token; an edited one keeps its token when none is typed
     * @return array
     */
    private function getRowRules($add)
    {
        return [
            'name' => [
                'empty' => [
                    'rule' => 'isEmpty',
                    'negate' => true,
                    'message' => Language::_('LicenseBridge.!error.name.empty', true),
                ],
            ],
            'scheme' => [
                'valid' => [
                    'rule' => ['in_array', array_keys($this->schemes())],
                    'message' => Language::_('LicenseBridge.!error.scheme.valid', true),
                ],
            ],
            'host' => [
                'valid' => [
                    'rule' => [[$this, 'validateHost']],
                    'message' => Language::_('LicenseBridge.!error.host.valid', true),
                ],
            ],
            'port' => [
                'valid' => [
                    'rule' => [[$this, 'validatePort']],
                    'message' => Language::_('LicenseBridge.!error.port.valid', true),
                ],
            ],
            'token' => [
                'empty' => [
                    'rule' => 'isEmpty',
                    'negate' => true,
                    'message' => Language::_($add ? 'LicenseBridge.!error.token.empty' : 'LicenseBridge.!error.token.missing', true),
                ],
            ],
        ];
    }

    /**
     * The row as typed, trimmed; on edit an empty token means the stored one.
     *
     * @param array $vars
     * @param stdClass|null $module_row
     * @return array
     */
    private function rowInput(array $vars, $module_row)
    {
        $text = function ($key) use ($vars) {
            return isset($vars[$key]) && is_scalar($vars[$key]) ? trim((string) $vars[$key]) : '';
        };
        $row = [
            'name' => $text('name'),
            'scheme' => strtolower($text('scheme')) ?: 'https',
            'host' => $text('host'),
            'port' => $text('port'),
            'token' => $text('token'),
        ];
        if ($row['token'] === '' && $module_row !== null && isset($module_row->meta->token)) {
            $row['token'] = (string) $module_row->meta->token;
        }

        return $row;
    }

    /**
     * The row's meta for Blesta, the token encrypted.
     *
     * @param array $row
     * @return array
     */
    private function rowMeta(array $row)
    {
        $meta = [];
        foreach (['name', 'scheme', 'host', 'port', 'token'] as $key) {
            $meta[] = ['key' => $key, 'value' => $row[$key], 'encrypted' => $key === 'token' ? 1 : 0];
        }

        return $meta;
    }

    /**
     * @param stdClass|array $meta
     * @return bool
     */
    private function rowComplete($meta)
    {
        $meta = (object) $meta;

        return isset($meta->host, $meta->token) && trim((string) $meta->host) !== '' && (string) $meta->token !== '';
    }

    /**
     * The bridge's base URL from a row: scheme://host[:port].
     *
     * @param stdClass|array $meta
     * @return string
     */
    private function rowBaseUrl($meta)
    {
        $meta = (object) $meta;

        return LicenseBridgeClient::baseUrl(
            isset($meta->scheme) ? (string) $meta->scheme : 'https',
            isset($meta->host) ? (string) $meta->host : '',
            isset($meta->port) ? (string) $meta->port : ''
        );
    }

    /**
     * @return array
     */
    private function schemes()
    {
        return [
            'https' => Language::_('LicenseBridge.row_meta.scheme_https', true),
            'http' => Language::_('LicenseBridge.row_meta.scheme_http', true),
        ];
    }

    /**
     * Validates the package's meta and returns it.
     *
     * @param array $vars
     * @return array|null
     */
    private function packageMeta(array $vars)
    {
        $meta = isset($vars['meta']) && is_array($vars['meta']) ? $vars['meta'] : [];
        $id = isset($meta['package_identifier']) && is_scalar($meta['package_identifier']) ? trim((string) $meta['package_identifier']) : '';
        $input = ['meta' => ['package_identifier' => $id]];
        $this->Input->setRules([
            'meta[package_identifier]' => [
                'valid' => [
                    'rule' => [[$this, 'validateProductId']],
                    'message' => Language::_('LicenseBridge.!error.meta[package_identifier].valid', true),
                ],
            ],
        ]);
        if (!$this->Input->validates($input)) {
            return null;
        }

        return [['key' => 'package_identifier', 'value' => $id, 'encrypted' => 0]];
    }

    /**
     * The bridge's product id of a package: its package_identifier, else the Blesta package id.
     *
     * @param stdClass $package
     * @return string
     */
    private function productOf($package)
    {
        $id = isset($package->meta->package_identifier) ? trim((string) $package->meta->package_identifier) : '';

        return $id !== '' ? $id : (string) (isset($package->id) ? $package->id : '');
    }

    /**
     * The bridge's billing cycle for a package pricing (term and period), or null with an Input
     * error when the pricing is missing or has no matching cycle (nothing is bought then).
     *
     * @param stdClass $package
     * @param int|string|null $pricing_id
     * @return string|null
     */
    private function cycleFor($package, $pricing_id)
    {
        $pricing = null;
        foreach ((isset($package->pricing) ? (array) $package->pricing : []) as $candidate) {
            if (isset($candidate->id) && (string) $candidate->id === (string) $pricing_id) {
                $pricing = $candidate;
                break;
            }
        }
        if ($pricing === null) {
            $this->setError('pricing_id', 'missing', Language::_('LicenseBridge.!error.pricing_id.missing', true));
            return null;
        }
        $period = isset($pricing->period) ? (string) $pricing->period : '';
        $term = isset($pricing->term) ? (int) $pricing->term : 0;
        // The shared rule: a bridge cycle for 1, 3, 6, 12, 24 or 36 months, false for any other.
        $cycle = isset(self::PERIOD_MONTHS[$period]) && $term > 0 ? \LicenseBridgeRules::cycle($term * self::PERIOD_MONTHS[$period]) : false;
        if (!is_string($cycle)) {
            $this->setError('pricing_id', 'cycle', Language::_('LicenseBridge.!error.pricing_id.cycle', true, $term, $period));
            return null;
        }

        return $cycle;
    }

    /**
     * The client of a new service (Blesta's Clients model), or null with an Input error.
     *
     * @param array $vars
     * @return stdClass|null
     */
    private function clientFor(array $vars)
    {
        if (!isset($vars['client_id'])) {
            $this->setError('client_id', 'missing', Language::_('LicenseBridge.!error.client_id.missing', true));
            return null;
        }
        Loader::loadModels($this, ['Clients']);
        $client = $this->Clients->get($vars['client_id'], false);
        if (!$client) {
            $this->setError('client_id', 'missing', Language::_('LicenseBridge.!error.client_id.missing', true));
            return null;
        }

        return $client;
    }

    /**
     * @param stdClass $client
     * @return string|null
     */
    private function customerName($client)
    {
        $name = trim((isset($client->first_name) ? $client->first_name : '') . ' ' . (isset($client->last_name) ? $client->last_name : ''));
        if ($name === '' && isset($client->company)) {
            $name = trim((string) $client->company);
        }
        return \LicenseBridgeRules::customerName($name);
    }

    /**
     * Blesta's dates (UTC "Y-m-d H:i:s", or ISO 8601 as in ProvisionPendingServices) as ISO 8601 UTC.
     *
     * @param mixed $date
     * @return string|null
     */
    private function isoDate($date)
    {
        if (!is_string($date) || trim($date) === '' || strpos($date, '0000-00-00') === 0) {
            return null;
        }
        try {
            $at = new DateTimeImmutable(trim($date), new DateTimeZone('UTC'));
        } catch (\Exception $e) {
            return null;
        }

        return $at->setTimezone(new DateTimeZone('UTC'))->format('Y-m-d\TH:i:s\Z');
    }

    /**
     * Whether Blesta asks for provisioning: only the string 'true' (or true) does.
     *
     * @param array $vars
     * @return bool
     */
    private function usesModule(array $vars)
    {
        return isset($vars['use_module']) && ($vars['use_module'] === 'true' || $vars['use_module'] === true);
    }

    /**
     * Two spellings of one address are the same IP.
     *
     * @param string $a
     * @param string $b
     * @return bool
     */
    private function sameIp($a, $b)
    {
        $pa = @inet_pton(trim($a));
        $pb = @inet_pton(trim($b));
        if ($pa !== false && $pb !== false) {
            return $pa === $pb;
        }

        return strtolower(trim($a)) === strtolower(trim($b));
    }

    /**
     * The service_identifier of a service being provisioned: the same for every retry of the same
     * activation, whatever Blesta passes back in $vars, and different for every service.
     *
     * - A pending service being activated (the Provision Paid Pending Services task, or an admin
     *   saving a pending service as active): Blesta's Services::edit() calls addService with the
     *   $vars its validateEdit() returned, which always hold the service's id ($vars['service_id'],
     *   app/models/services.php in Blesta 4.7 and 5.13), and the service row exists, pending, for
     *   that client. Its id names it, as every other panel's module names a service by the panel's
     *   id. A service ordered under an earlier version of this module kept the name it stored at
     *   order time ("blesta-" and 24 hex digits, possibly already sent to the bridge): that name is
     *   read from Blesta's own row, not from $vars, and kept.
     * - A service added as active (Services::add(), the admin's add form or the API): Blesta calls
     *   addService before it inserts the row, so no id exists yet. The name is a hash of what
     *   defines this order: the client, the package, the IP, and the add form's one-time token
     *   (posted again when the admin re-submits after an error). The same form names the same
     *   order; another form for the same client, package and IP names another one, which the
     *   bridge refuses (ip_in_use) rather than share a licence. Without a token (an API call) the
     *   client, package and IP alone name it.
     *
     * @param stdClass $package
     * @param array $vars addService's $vars
     * @param string $ip The licence's IP (validated)
     * @return string
     */
    private function serviceIdentifier($package, array $vars, $ip)
    {
        $service = $this->activatingService($vars);
        if ($service !== null) {
            $stored = $this->storedFields($service)[self::FIELD_REF];
            return preg_match(self::LEGACY_REF_PATTERN, $stored) === 1 ? $stored : (string) (int) $service->id;
        }
        $token = isset($vars[self::FIELD_ADD_TOKEN]) && is_string($vars[self::FIELD_ADD_TOKEN])
            && preg_match(self::ADD_TOKEN_PATTERN, $vars[self::FIELD_ADD_TOKEN]) === 1 ? $vars[self::FIELD_ADD_TOKEN] : '';
        $packed = @inet_pton((string) \LicenseBridgeRules::ip($ip));
        $order = implode("\n", [
            'blesta-add',
            (string) ($vars['client_id'] ?? ''),
            (string) (isset($package->id) ? $package->id : ''),
            $packed !== false ? bin2hex($packed) : strtolower(trim($ip)),
            $token,
        ]);

        return 'blesta-' . substr(hash('sha256', $order), 0, 24);
    }

    /**
     * The pending service that addService is activating, when Blesta's Services::edit() is the
     * caller: $vars['service_id'] names an existing pending service of the same client.
     *
     * @param array $vars
     * @return stdClass|null
     */
    private function activatingService(array $vars)
    {
        $id = isset($vars['service_id']) && is_scalar($vars['service_id']) ? (string) $vars['service_id'] : '';
        if (preg_match('/^[1-9][0-9]{0,18}$/D', $id) !== 1) {
            return null;
        }
        Loader::loadModels($this, ['Services']);
        $service = $this->Services->get((int) $id);
        if (!$service || ($service->status ?? null) !== 'pending'
            || (string) ($service->client_id ?? '') !== (string) ($vars['client_id'] ?? '')) {
            return null;
        }

        return $service;
    }

    /**
     * A view of this module.
     *
     * @param string $file
     * @return View
     */
    private function makeView($file)
    {
        $view = new View($file, 'default');
        $view->base_uri = $this->base_uri;
        $view->setDefaultView('components' . DS . 'modules' . DS . 'license_bridge' . DS);

        return $view;
    }
}
