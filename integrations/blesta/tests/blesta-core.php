<?php
/**
 * The stand-in's calling code: what Blesta's core does around each module call, so the module is
 * called exactly as Blesta calls it. Read in Blesta's own source (the distributed, unencoded PHP):
 *  - Blesta 4.7 (GitHub martial69320/blesta @ d07675fefcf358c51c0eedfae73a1360d26d66f5; newest
 *    upgrade task components/upgrades/tasks/upgrade4_7_0_b1.php): app/models/services.php
 *    add() (949: addService at 1040, the row inserted only at 1109-1111), edit() (1198: $vars from
 *    validateEdit() at 1201; a pending service set active calls addService at 1329-1341 with
 *    client_id and pricing_id set from the service), validateEdit() (5208: $vars['service_id'] =
 *    $service_id at 5213, and the returned $vars are what edit() passes on);
 *    core/Automation/Tasks/Task/ProvisionPendingServices.php (the stored fields merged with
 *    status/date_renews, 96-104); app/controllers/admin_clients.php editService() (4970: a pending
 *    service's form posts the add fields, use_module 'false' when unticked (5073), a new
 *    date_renews (5090-5102), then Services::edit (5113));
 *  - Blesta 5.13 (GitHub hosterpk/whmcs_blesta @ 95344ce53ac1071338f91459fcdca940e18480e6, newest
 *    upgrade task upgrade5_13_7.php): the same add(), edit(), validateEdit() (service_id set the
 *    same way) and ProvisionPendingServices.php; 5.13 only adds a try/catch around the module
 *    call and counts failed provisioning attempts;
 *  - app/models/module_manager.php addRow()/editRow(), the renewal invoicing, and
 *    ClientServices::processModuleTab, as before (Blesta 5.8.2 as summarised in research notes).
 *
 * What each method reproduces:
 *  - the module instance: a fresh LicenseBridge per model call (ModuleManager::initModule), with
 *    setModule() and, for service calls, setModuleRow() of the service's row;
 *  - the arguments: $package (Packages::get shape), $service (Services::get shape: fields
 *    decrypted, package, package_pricing), $vars with use_module as the strings 'true'/'false'
 *    (forced 'false' for pending and in_review services on add), and on Services::edit the
 *    service_id that validateEdit() adds;
 *  - the outcome: errors() read after every call (errors stop everything: nothing stored, no
 *    status change); a returned field list REPLACES all of the service's fields (setFields);
 *    null keeps them.
 */

require_once __DIR__ . '/blesta-stub.php';
require_once ROOTDIR . 'components' . DS . 'modules' . DS . 'license_bridge' . DS . 'license_bridge.php';

final class BlestaCore
{
    /** Errors of the last model call (Services->errors(), ModuleManager->errors()). */
    public static $errors = false;
    /** What the module returned in the last call. */
    public static $returned = null;
    /** Every module method called in this run, in order: [method, summary of arguments]. */
    public static array $calls = [];
    /** Base URI Blesta gives the module (admin or client area). */
    public static string $baseUri = '/admin/';

    public static function module(): LicenseBridge
    {
        $row = BlestaDb::$data['modules'][0];
        $module = new LicenseBridge();
        $module->setModule((object) ['id' => $row['id'], 'name' => $row['name'], 'class' => $row['class'], 'company_id' => $row['company_id']]);
        $module->base_uri = self::$baseUri;

        return $module;
    }

    /** The module object with its rows and groups, as the module page gets it. */
    public static function moduleWithRows(): stdClass
    {
        $manager = new ModuleManager();
        $row = BlestaDb::$data['modules'][0];

        return (object) [
            'id' => $row['id'],
            'name' => $row['name'],
            'rows' => $manager->getRows($row['id']),
            'groups' => array_map(fn ($g) => $manager->getGroup($g['id']), BlestaDb::$data['module_groups']),
        ];
    }

    // --------------------------------------------------------------------------------------
    // ModuleManager::addRow / editRow
    // --------------------------------------------------------------------------------------

    public static function addRow(array $vars)
    {
        $module = self::module();
        self::$calls[] = ['addModuleRow', array_keys($vars)];
        $meta = $module->addModuleRow($vars);
        self::$returned = $meta;
        if ((self::$errors = $module->errors())) {
            return null;
        }
        $id = BlestaDb::nextId();
        BlestaDb::$data['module_rows'][] = ['id' => $id, 'module_id' => BlestaDb::$data['modules'][0]['id'], 'meta' => BlestaDb::storeList((array) $meta)];

        return $id;
    }

    public static function editRow($row_id, array $vars)
    {
        $module = self::module();
        $row = (new ModuleManager())->getRow($row_id);
        self::$calls[] = ['editModuleRow', array_keys($vars)];
        $meta = $module->editModuleRow($row, $vars);
        self::$returned = $meta;
        if ((self::$errors = $module->errors())) {
            return null;
        }
        foreach (BlestaDb::$data['module_rows'] as &$stored) {
            if ((string) $stored['id'] === (string) $row_id) {
                $stored['meta'] = BlestaDb::storeList((array) $meta);
            }
        }

        return $row_id;
    }

    // --------------------------------------------------------------------------------------
    // Packages::add / edit
    // --------------------------------------------------------------------------------------

    public static function addPackage(array $vars)
    {
        $module = self::module();
        self::$calls[] = ['addPackage', $vars['meta'] ?? null];
        $meta = $module->addPackage($vars);
        self::$returned = $meta;
        if ((self::$errors = $module->errors())) {
            return null;
        }
        $id = isset($vars['id']) ? (int) $vars['id'] : BlestaDb::nextId();
        $pricing = [];
        foreach ($vars['pricing'] ?? [['term' => 1, 'period' => 'month']] as $p) {
            $pricing[] = ['id' => isset($p['id']) ? (int) $p['id'] : BlestaDb::nextId(), 'package_id' => $id, 'term' => (int) $p['term'],
                'period' => $p['period'], 'price' => $p['price'] ?? '10.0000', 'price_renews' => null, 'setup_fee' => '0.0000',
                'cancel_fee' => '0.0000', 'currency' => $p['currency'] ?? 'USD'];
        }
        BlestaDb::$data['packages'][] = [
            'id' => $id, 'id_code' => (string) $id, 'module_id' => BlestaDb::$data['modules'][0]['id'], 'name' => $vars['name'] ?? ('Package ' . $id),
            'module_row' => $vars['module_row'] ?? 0, 'module_group' => $vars['module_group'] ?? null, 'module_group_client' => 0,
            'single_term' => 0, 'status' => 'active', 'prorata_day' => null, 'meta' => BlestaDb::storeList((array) $meta), 'pricing' => $pricing,
        ];

        return $id;
    }

    // --------------------------------------------------------------------------------------
    // Services
    // --------------------------------------------------------------------------------------

    /** Services::get(): the row, its fields decrypted, the package (meta decrypted) and its pricing. */
    public static function getService($service_id)
    {
        foreach (BlestaDb::$data['services'] as $row) {
            if ((string) $row['id'] !== (string) $service_id) {
                continue;
            }
            $service = (object) $row;
            $service->fields = BlestaDb::readList($row['fields']);
            $service->options = [];
            $package = (new Packages())->getByPricingId($row['pricing_id']);
            $service->package = $package;
            $service->package_id = $package ? $package->id : null;
            foreach ($package ? $package->pricing : [] as $pricing) {
                if ((string) $pricing->id === (string) $row['pricing_id']) {
                    $service->package_pricing = (object) ((array) $pricing + ['pricing_id' => $pricing->id]);
                }
            }
            $service->name = self::module()->getServiceName($service);

            return $service;
        }

        return false;
    }

    /** Services::setFields(): deletes every field of the service and inserts the given list. */
    public static function setFields($service_id, array $fields): void
    {
        foreach (BlestaDb::$data['services'] as &$row) {
            if ((string) $row['id'] === (string) $service_id) {
                $row['fields'] = BlestaDb::storeList($fields);
            }
        }
    }

    private static function update($service_id, array $columns): void
    {
        foreach (BlestaDb::$data['services'] as &$row) {
            if ((string) $row['id'] === (string) $service_id) {
                foreach ($columns as $key => $value) {
                    $row[$key] = $value;
                }
            }
        }
    }

    /** The module with the service's row set, as Blesta prepares it for any service call. */
    private static function moduleFor($service): LicenseBridge
    {
        $module = self::module();
        $module->setModuleRow($module->getModuleRow($service->module_row_id));

        return $module;
    }

    /** Services::add(). */
    public static function servicesAdd(array $vars)
    {
        self::$errors = false;
        $package = (new Packages())->getByPricingId($vars['pricing_id'] ?? null);
        if (!$package) {
            self::$errors = ['pricing_id' => ['exists' => 'unknown pricing']];
            return null;
        }
        $vars['status'] = $vars['status'] ?? 'pending';
        $vars['use_module'] = $vars['use_module'] ?? 'true';
        if (in_array($vars['status'], ['pending', 'in_review'], true)) {
            $vars['use_module'] = 'false';
        }
        $vars['qty'] = $vars['qty'] ?? 1;
        $vars['date_added'] = $vars['date_added'] ?? gmdate('Y-m-d H:i:s');

        $module = self::module();
        if (!isset($vars['module_row_id'])) {
            $vars['module_row_id'] = $package->module_row ?: $module->selectModuleRow($package->module_group);
        }
        $module->setModuleRow($module->getModuleRow($vars['module_row_id']));

        self::$calls[] = ['addService', ['use_module' => $vars['use_module'], 'status' => $vars['status']]];
        $info = $module->addService($package, $vars, null, null, $vars['status']);
        self::$returned = $info;
        if ((self::$errors = $module->errors())) {
            return null;
        }

        $id = BlestaDb::nextId();
        BlestaDb::$data['services'][] = [
            'id' => $id, 'id_code' => (string) (1000 + $id), 'parent_service_id' => null, 'package_group_id' => null,
            'pricing_id' => (int) $vars['pricing_id'], 'client_id' => (int) $vars['client_id'], 'module_row_id' => (int) $vars['module_row_id'],
            'coupon_id' => null, 'qty' => (int) $vars['qty'], 'override_price' => null, 'override_currency' => null,
            'status' => $vars['status'], 'suspension_reason' => null, 'cancellation_reason' => null, 'date_added' => $vars['date_added'],
            'date_renews' => $vars['date_renews'] ?? null, 'date_last_renewed' => null, 'date_suspended' => null, 'date_canceled' => null,
            'fields' => [],
        ];
        if (is_array($info)) {
            self::setFields($id, $info);
        }

        return $id;
    }

    /** Services::edit(). */
    public static function servicesEdit($service_id, array $vars, $bypass_module = false, $notify = false)
    {
        self::$errors = false;
        $service = self::getService($service_id);
        if (!$service) {
            self::$errors = ['service_id' => ['exists' => 'unknown service']];
            return null;
        }
        // validateEdit() always sets these, and edit() passes the $vars it returns to the module.
        $vars['service_id'] = $service_id;
        $vars['use_module'] = $vars['use_module'] ?? 'true';
        $vars['pricing_id'] = $vars['pricing_id'] ?? $service->pricing_id;
        $vars['qty'] = $vars['qty'] ?? $service->qty;
        $vars['current_qty'] = $service->qty;

        $packageFrom = clone $service->package;
        $package = $service->package;
        if ((string) $vars['pricing_id'] !== (string) $service->pricing_id) {
            $package = (new Packages())->getByPricingId($vars['pricing_id']);
        }

        if (!$bypass_module) {
            $module = self::moduleFor($service);
            if ((string) $vars['pricing_id'] !== (string) $service->pricing_id && $vars['use_module'] == 'true') {
                self::$calls[] = ['changeServicePackage', ['from' => $packageFrom->id, 'to' => $package->id]];
                $info = $module->changeServicePackage($packageFrom, $package, $service, null, null);
                self::$returned = $info;
                if ((self::$errors = $module->errors())) {
                    return null;
                }
                if ($info && is_array($info)) {
                    self::setFields($service_id, $info);
                    $service = self::getService($service_id);
                }
            }

            if ($service->status == 'pending' && isset($vars['status']) && $vars['status'] == 'active') {
                $vars['pricing_id'] = $service->pricing_id;
                $vars['client_id'] = $service->client_id;
                self::$calls[] = ['addService', ['use_module' => $vars['use_module'], 'status' => $vars['status']]];
                $info = $module->addService($package, $vars, null, null, $vars['status']);
            } else {
                self::$calls[] = ['editService', ['use_module' => $vars['use_module']]];
                $info = $module->editService($package, $service, $vars, null, null);
            }
            self::$returned = $info;
            if ((self::$errors = $module->errors())) {
                return null;
            }
            if (is_array($info)) {
                self::setFields($service_id, $info);
            }
        }

        $columns = [];
        foreach (['pricing_id', 'status', 'date_renews', 'date_last_renewed', 'date_suspended', 'date_canceled', 'qty'] as $key) {
            if (array_key_exists($key, $vars)) {
                $columns[$key] = $vars[$key];
            }
        }
        self::update($service_id, $columns);

        return $service_id;
    }

    /** The ProvisionPendingServices task for one paid pending service. */
    public static function provisionPending($service_id)
    {
        $service = self::getService($service_id);
        $moduleFields = [];
        foreach ($service->fields as $field) {
            $moduleFields[$field->key] = $field->value;
        }
        $term = (int) $service->package_pricing->term;
        $period = (string) $service->package_pricing->period;
        $fields = ['status' => 'active', 'date_renews' => gmdate('c', strtotime('+' . $term . ' ' . $period))];

        return self::servicesEdit($service_id, array_merge($moduleFields, $fields), false, true);
    }

    /**
     * AdminClients::editService() for a pending service: the page shows the module's add fields
     * (getAdminAddFields with the stored fields), and its form posts only what the form holds:
     * those fields, the status, the use_module checkbox ('false' when unticked) and, when the
     * status becomes active, a new renew date. Nothing else of the stored fields is posted.
     */
    public static function adminEditPending($service_id, array $post)
    {
        $service = self::getService($service_id);
        if (!isset($post['use_module'])) {
            $post['use_module'] = 'false';
        }
        if (($post['status'] ?? null) === 'active' && $service->package_pricing->period !== 'onetime') {
            $post['date_renews'] = gmdate('c', strtotime('+' . (int) $service->package_pricing->term . ' ' . $service->package_pricing->period));
        }
        $post['configoptions'] = $post['configoptions'] ?? [];

        return self::servicesEdit($service_id, $post, false, ($post['notify_order'] ?? 'false') === 'true');
    }

    /** Services::suspend(). */
    public static function suspend($service_id, array $vars = [])
    {
        self::$errors = false;
        $service = self::getService($service_id);
        $vars += ['use_module' => 'true', 'date_suspended' => gmdate('Y-m-d H:i:s'), 'status' => 'suspended'];
        if ($vars['use_module'] == 'true') {
            $module = self::moduleFor($service);
            self::$calls[] = ['suspendService', []];
            $info = $module->suspendService($service->package, $service, null, null);
            self::$returned = $info;
            if ((self::$errors = $module->errors())) {
                return null;
            }
            if (is_array($info)) {
                self::setFields($service_id, $info);
            }
        }
        self::update($service_id, ['status' => 'suspended', 'date_suspended' => $vars['date_suspended']]);

        return $service_id;
    }

    /** Services::unsuspend() (it also clears a scheduled cancellation). */
    public static function unsuspend($service_id, array $vars = [])
    {
        self::$errors = false;
        $service = self::getService($service_id);
        $vars += ['use_module' => 'true'];
        if ($vars['use_module'] == 'true') {
            $module = self::moduleFor($service);
            self::$calls[] = ['unsuspendService', []];
            $info = $module->unsuspendService($service->package, $service, null, null);
            self::$returned = $info;
            if ((self::$errors = $module->errors())) {
                return null;
            }
            if (is_array($info)) {
                self::setFields($service_id, $info);
            }
        }
        self::update($service_id, ['status' => 'active', 'date_suspended' => null, 'date_canceled' => null]);

        return $service_id;
    }

    /**
     * Services::cancel(): a future date (or end_of_term) only schedules the cancellation and calls
     * no module; now or a past date cancels, calling cancelService when use_module is 'true' and
     * the service is not pending.
     */
    public static function cancel($service_id, array $vars = [])
    {
        self::$errors = false;
        $service = self::getService($service_id);
        $vars += ['use_module' => 'true'];
        if ($service->status == 'pending') {
            $vars['use_module'] = 'false';
        }
        $date = $vars['date_canceled'] ?? gmdate('Y-m-d H:i:s');
        if ($date === 'end_of_term') {
            $date = $service->date_renews;
        }
        if (strtotime($date . ' UTC') > time()) {
            self::update($service_id, ['date_canceled' => $date]);
            return $service_id;
        }
        if ($vars['use_module'] == 'true') {
            $module = self::moduleFor($service);
            self::$calls[] = ['cancelService', []];
            $info = $module->cancelService($service->package, $service, null, null);
            self::$returned = $info;
            if ((self::$errors = $module->errors())) {
                return null;
            }
            if (is_array($info)) {
                self::setFields($service_id, $info);
            }
        }
        self::update($service_id, ['status' => 'canceled', 'date_canceled' => $date]);

        return $service_id;
    }

    /** The renewal invoice is created: date_renews moves one term forward, bypassing the module. */
    public static function invoiceRenewal($service_id)
    {
        $service = self::getService($service_id);
        $from = $service->date_renews ?: gmdate('Y-m-d H:i:s');
        $next = gmdate('Y-m-d H:i:s', strtotime($from . ' UTC +' . (int) $service->package_pricing->term . ' ' . $service->package_pricing->period));

        return self::servicesEdit($service_id, ['date_renews' => $next, 'date_last_renewed' => $service->date_renews, 'use_module' => 'false'], true);
    }

    /** Services::renew(): the renewal invoice was paid (the ProcessRenewingServices task). */
    public static function renew($service_id)
    {
        self::$errors = false;
        $service = self::getService($service_id);
        $module = self::moduleFor($service);
        self::$calls[] = ['renewService', ['date_renews' => $service->date_renews]];
        $info = $module->renewService($service->package, $service, null, null);
        self::$returned = $info;
        if ((self::$errors = $module->errors())) {
            return null;
        }
        if (is_array($info)) {
            self::setFields($service_id, $info);
        }

        return $service_id;
    }

    // --------------------------------------------------------------------------------------
    // Pages
    // --------------------------------------------------------------------------------------

    /** The service row expanded in the admin ('admin') or client ('client') area. */
    public static function serviceInfo($service_id, string $area): string
    {
        $service = self::getService($service_id);
        self::$baseUri = $area === 'client' ? '/client/' : '/admin/';
        $module = self::moduleFor($service);
        $method = $area === 'client' ? 'getClientServiceInfo' : 'getAdminServiceInfo';
        self::$calls[] = [$method, []];

        return $module->{$method}($service, $service->package);
    }

    /**
     * ClientServices::processModuleTab(): the tab must be one of the module's client tabs; the
     * module row is set; the tab's HTML, errors and messages are shown.
     */
    public static function clientTab($service_id, string $method, array $get, ?array $post): array
    {
        $service = self::getService($service_id);
        self::$baseUri = '/client/';
        $module = self::moduleFor($service);
        $tabs = $module->getClientServiceTabs($service);
        if (!array_key_exists($method, $tabs)) {
            return ['html' => null, 'errors' => ['tab' => ['unknown' => 'no such tab']], 'messages' => [], 'tabs' => $tabs];
        }
        self::$calls[] = [$method, ['post' => $post !== null]];
        $html = $module->{$method}($service->package, $service, $get, $post, []);

        return ['html' => $html, 'errors' => $module->errors() ?: false, 'messages' => $module->getMessages(), 'tabs' => $tabs];
    }

    /** The fields a page shows: admin add/edit, client add/edit, package. */
    public static function fields(string $which, $package_id, array $vars): array
    {
        $module = self::module();
        $package = (new Packages())->get($package_id);
        $object = json_decode((string) json_encode($vars));
        $object = is_object($object) ? $object : new stdClass();
        switch ($which) {
            case 'admin_add':
                $fields = $module->getAdminAddFields($package, $object);
                break;
            case 'admin_edit':
                $fields = $module->getAdminEditFields($package, $object);
                break;
            case 'client_add':
                $fields = $module->getClientAddFields($package, $object);
                break;
            case 'client_edit':
                $fields = $module->getClientEditFields($package, $object);
                break;
            case 'package':
                $object->meta = (array) ($vars['meta'] ?? []);
                $fields = $module->getPackageFields($object);
                break;
            default:
                throw new InvalidArgumentException($which);
        }

        return ModuleFields::describe($fields);
    }
}
