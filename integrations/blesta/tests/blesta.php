<?php
/**
 * Test driver: one Blesta request against the License Bridge module, through the stand-in.
 * Each run is one request (Blesta runs one per PHP process too); the JSON file given first is
 * Blesta's database and survives between runs.
 *
 *   LB_URL=http://127.0.0.1:PORT LB_TOKEN=... php blesta.php <db.json> <action> ['<json args>']
 *
 * Actions (what Blesta does, see blesta-core.php):
 *   client.add {id, email, first_name, last_name}      a client (not module business)
 *   row.add [{vars}]                                   Settings > Modules > Add Bridge (vars default from LB_URL/LB_TOKEN)
 *   row.edit {row_id, vars}                            ... > Edit Bridge
 *   row.manage_add / row.manage_edit {row_id} / module.manage   the module's pages (HTML)
 *   row.store {row_id, meta}                           changes a stored row behind the module's back
 *                                                      (the bridge moved or rotated its token since)
 *   package.add {id, name, module_row, meta, pricing}  Packages > Add, with the module's fields
 *   fields {which, package_id, vars}                   admin_add | admin_edit | client_add | client_edit | package
 *   service.add {vars}                                 Services::add (order: status pending; admin: status active)
 *   service.activate {service_id}                      the ProvisionPendingServices task (after payment)
 *   service.admin_edit_pending {service_id, post}      an admin saves a pending service's page (e.g. Activate:
 *                                                      status active, use_module 'true'): only the form's fields
 *   service.store_fields {service_id, fields}          changes a service's stored fields behind the module's back
 *                                                      (a service an earlier module version stored)
 *   service.edit {service_id, vars}                    Services::edit (admin edit, status change, package change)
 *   service.suspend / service.unsuspend {service_id, vars}
 *   service.cancel {service_id, vars}                  date_canceled: now (default), a date, or end_of_term
 *   service.invoice_renewal {service_id}               the renewal invoice is created (date_renews moves on)
 *   service.renew {service_id}                         the renewal invoice is paid (ProcessRenewingServices)
 *   service.info {service_id, area}                    the service row expanded (admin | client)
 *   service.tab {service_id, method, get, post}        a client tab (GET, or POST when post is given)
 *   db                                                 the whole database
 *
 * Prints {ok, result, errors, returned, calls, html, tab, fields, service, row, logs}: errors are
 * what Blesta would show; logs are the module log lines written in this run.
 */

require_once __DIR__ . '/blesta-core.php';

[$script, $dbPath, $action] = $argv + [null, null, null];
$args = json_decode($argv[3] ?? (getenv('LB_ARGS') ?: '{}'), true);
$args = is_array($args) ? $args : [];
if (!$dbPath || !$action) {
    fwrite(STDERR, "usage: php blesta.php <db.json> <action> ['<json args>']\n");
    exit(2);
}

BlestaDb::load($dbPath);
Module::$requestor_staff_id = isset($args['staff_id']) ? $args['staff_id'] : 1;

/** Row vars from the environment: the bridge URL split into Blesta's row fields, and the token. */
function rowVarsFromEnv(array $over = []): array
{
    $url = parse_url((string) getenv('LB_URL')) ?: [];

    return array_merge([
        'name' => 'Test bridge',
        'scheme' => $url['scheme'] ?? 'https',
        'host' => $url['host'] ?? '',
        'port' => isset($url['port']) ? (string) $url['port'] : '',
        'token' => (string) getenv('LB_TOKEN'),
    ], $over);
}

/** A service as a page shows it: columns and fields as key => value. */
function serviceView($id)
{
    $service = BlestaCore::getService($id);
    if (!$service) {
        return null;
    }
    $fields = [];
    foreach ($service->fields as $field) {
        $fields[$field->key] = $field->value;
    }

    return [
        'id' => $service->id, 'status' => $service->status, 'pricing_id' => $service->pricing_id, 'package_id' => $service->package_id,
        'name' => $service->name, 'date_renews' => $service->date_renews, 'date_canceled' => $service->date_canceled, 'fields' => $fields,
    ];
}

/** A module's meta list, encrypted values masked: what the module handed Blesta to store. */
function maskedMeta($meta)
{
    if (!is_array($meta)) {
        return $meta;
    }

    return array_map(function ($item) {
        $item = (array) $item;
        if (!empty($item['encrypted'])) {
            $item['value'] = '[encrypted, ' . strlen((string) $item['value']) . ' characters]';
        }
        return $item;
    }, $meta);
}

$out = ['action' => $action, 'ok' => true, 'result' => null, 'errors' => false, 'returned' => null, 'calls' => [],
    'html' => null, 'tab' => null, 'fields' => null, 'service' => null, 'row' => null, 'logs' => []];
$serviceId = $args['service_id'] ?? null;

switch ($action) {
    case 'client.add':
        BlestaDb::$data['clients'][] = $args + ['company' => null, 'contact_id' => $args['id']];
        $out['result'] = $args['id'];
        break;

    case 'row.add':
        $vars = isset($args['vars']) ? $args['vars'] : rowVarsFromEnv($args['over'] ?? []);
        $out['result'] = BlestaCore::addRow($vars);
        $out['returned'] = maskedMeta(BlestaCore::$returned);
        break;

    case 'row.edit':
        $vars = $args['vars'] ?? [];
        $out['result'] = BlestaCore::editRow($args['row_id'], $vars);
        $out['returned'] = maskedMeta(BlestaCore::$returned);
        break;

    case 'row.store':
        foreach (BlestaDb::$data['module_rows'] as &$stored) {
            if ((string) $stored['id'] === (string) $args['row_id']) {
                $meta = array_merge((array) BlestaDb::meta($stored['meta']), $args['meta'] ?? []);
                $list = [];
                foreach ($meta as $key => $value) {
                    $list[] = ['key' => $key, 'value' => $value, 'encrypted' => $key === 'token' ? 1 : 0];
                }
                $stored['meta'] = BlestaDb::storeList($list);
            }
        }
        unset($stored);
        $out['result'] = $args['row_id'];
        break;

    case 'module.manage':
        $vars = [];
        $out['html'] = BlestaCore::module()->manageModule(BlestaCore::moduleWithRows(), $vars);
        break;

    case 'row.manage_add':
        $vars = $args['vars'] ?? [];
        $out['html'] = BlestaCore::module()->manageAddRow($vars);
        break;

    case 'row.manage_edit':
        $vars = $args['vars'] ?? [];
        $out['html'] = BlestaCore::module()->manageEditRow((new ModuleManager())->getRow($args['row_id']), $vars);
        break;

    case 'package.add':
        $out['result'] = BlestaCore::addPackage($args);
        $out['returned'] = BlestaCore::$returned;
        break;

    case 'fields':
        $out['fields'] = BlestaCore::fields($args['which'], $args['package_id'] ?? null, $args['vars'] ?? []);
        break;

    case 'service.add':
        $out['result'] = $serviceId = BlestaCore::servicesAdd($args['vars'] ?? []);
        $out['returned'] = BlestaCore::$returned;
        break;

    case 'service.activate':
        $out['result'] = BlestaCore::provisionPending($serviceId);
        $out['returned'] = BlestaCore::$returned;
        break;

    case 'service.admin_edit_pending':
        $out['result'] = BlestaCore::adminEditPending($serviceId, $args['post'] ?? []);
        $out['returned'] = BlestaCore::$returned;
        break;

    case 'service.store_fields':
        $list = [];
        foreach ((array) ($args['fields'] ?? []) as $key => $value) {
            $list[] = ['key' => $key, 'value' => $value, 'encrypted' => 0];
        }
        BlestaCore::setFields($serviceId, $list);
        $out['result'] = $serviceId;
        break;

    case 'service.edit':
        $out['result'] = BlestaCore::servicesEdit($serviceId, $args['vars'] ?? []);
        $out['returned'] = BlestaCore::$returned;
        break;

    case 'service.suspend':
    case 'service.unsuspend':
    case 'service.cancel':
        $method = substr($action, strlen('service.'));
        $out['result'] = BlestaCore::{$method}($serviceId, $args['vars'] ?? []);
        $out['returned'] = BlestaCore::$returned;
        break;

    case 'service.invoice_renewal':
        $out['result'] = BlestaCore::invoiceRenewal($serviceId);
        break;

    case 'service.renew':
        $out['result'] = BlestaCore::renew($serviceId);
        $out['returned'] = BlestaCore::$returned;
        break;

    case 'service.info':
        $out['html'] = BlestaCore::serviceInfo($serviceId, $args['area'] ?? 'admin');
        break;

    case 'service.tab':
        $out['tab'] = BlestaCore::clientTab($serviceId, $args['method'] ?? 'tabClientLicence', $args['get'] ?? [], $args['post'] ?? null);
        $out['html'] = $out['tab']['html'];
        $out['errors'] = $out['tab']['errors'];
        break;

    case 'db':
        $out['result'] = BlestaDb::$data;
        break;

    default:
        fwrite(STDERR, "unknown action $action\n");
        exit(2);
}

if ($out['errors'] === false) {
    $out['errors'] = BlestaCore::$errors;
}
$out['ok'] = $out['errors'] === false || $out['errors'] === null;
$out['calls'] = BlestaCore::$calls;
$out['logs'] = BlestaDb::$newLogs;
if ($serviceId !== null) {
    $out['service'] = serviceView($serviceId);
}
if (!empty(BlestaDb::$data['module_rows'])) {
    // The row as Blesta stores it (the token encrypted), and whether it decrypts to what was typed.
    $stored = end(BlestaDb::$data['module_rows']);
    $out['row'] = ['id' => $stored['id'], 'meta' => $stored['meta']];
    $token = (string) getenv('LB_TOKEN');
    foreach ($stored['meta'] as $item) {
        if ($item['key'] === 'token' && $token !== '') {
            $out['row']['token_encrypted'] = (bool) $item['encrypted'];
            $out['row']['token_round_trips'] = BlestaDb::decrypt((string) $item['value']) === $token;
        }
    }
}

BlestaDb::save();
echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_PRETTY_PRINT);
