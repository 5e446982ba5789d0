<?php

declare(strict_types=1);

/**
 * STAND-IN for FOSSBilling's Servicecustom module (test only): how it loads, builds and calls a
 * custom-product plug-in. Written from FOSSBilling 0.8.5 (commit 544bf2b8), same in main
 * (56a0871d) but for the storage layer:
 *  - src/modules/Servicecustom/Service.php: action_create (L93-110), action_activate ... action_delete,
 *    toApiArray, customCall (L228-244), getServiceCustomByOrderId, callOnAdapter (L289-325);
 *  - src/modules/Servicecustom/Api/Client.php `call` and Api/Admin.php `__call`.
 * This file lives at modules/Servicecustom/Service.php of the fake FOSSBilling root, as the real
 * one does, because callOnAdapter's RELATIVE require_once is resolved against include_path, then
 * this file's own folder, then the working directory.
 */
final class StandInServicecustom
{
    /** customCall's list, compared as FOSSBilling does: in_array, case-sensitive. */
    private const FORBIDDEN = ['delete', 'cancel', 'uncancel', 'suspend', 'unsuspend', 'renew', 'activate'];

    /** action_create: the service row copies the product's plugin and plugin_config and the order's config. */
    public static function action_create(array &$order): array
    {
        $state = &StandInDb::state();
        $product = $state['products'][(string) $order['product_id']] ?? null;
        if ($product === null) {
            throw new \FOSSBilling\InformationException('Product not found');
        }
        $id = StandInDb::nextId('service_custom');
        $state['services'][(string) $id] = [
            'id' => $id,
            'client_id' => $order['client_id'],
            'plugin' => $product['plugin'] ?? null,
            'plugin_config' => $product['plugin_config'] ?? null,
            'config' => $order['config'],
            'created_at' => StandInDb::now(),
            'updated_at' => StandInDb::now(),
        ];
        return $state['services'][(string) $id];
    }

    public static function action(string $action, array $order): bool
    {
        $model = StandInOrder::service($order);
        if ($action === 'delete' && $model === null) {
            return true; // action_delete: no service, nothing to call
        }
        if ($model === null) {
            throw new \FOSSBilling\Exception('Order :id has no active service', [':id' => $order['id']]);
        }
        self::callOnAdapter($model, $action);
        if ($action === 'delete') {
            $state = &StandInDb::state();
            unset($state['services'][(string) $model['id']]);
        }
        return true;
    }

    /** toApiArray: the decoded service config, then id, client_id, plugin and the dates on top. */
    public static function toApiArray(array $model): array
    {
        $data = json_decode($model['config'] ?? '', true) ?? [];
        $data['id'] = (string) $model['id'];
        $data['client_id'] = (string) $model['client_id'];
        $data['plugin'] = $model['plugin'];
        $data['updated_at'] = $model['updated_at'];
        $data['created_at'] = $model['created_at'];
        return $data;
    }

    public static function customCall(array $model, $method, array $params)
    {
        if (in_array($method, self::FORBIDDEN)) {
            throw new \FOSSBilling\Exception('Custom plugin method :method is forbidden', [':method' => $method], 403);
        }
        return self::callOnAdapter($model, $method, $params);
    }

    /** getServiceCustomByOrderId: with a client id, the order must be the client's, usable and active. */
    public static function serviceByOrderId($orderId, $clientId = null): array
    {
        $state = &StandInDb::state();
        $order = $state['orders'][(string) $orderId] ?? null;
        if ($clientId !== null) {
            if ($order === null || (string) $order['client_id'] !== (string) $clientId) {
                throw new \FOSSBilling\InformationException('Order not found');
            }
            StandInOrder::assertOrderUsable($order);
            if ($order['status'] !== 'active') {
                throw new \FOSSBilling\InformationException('Order is not activated');
            }
        } elseif ($order === null) {
            throw new \FOSSBilling\InformationException('Order not found');
        }
        $model = StandInOrder::service($order);
        if ($model === null) {
            throw new \FOSSBilling\Exception('Order is not activated');
        }
        return $model;
    }

    /** Api/Client.php `call`: order_id and method are required (RequiredParams, then isset checks). */
    public static function clientCall(int $clientId, array $data)
    {
        foreach (['order_id' => 'Order ID is required', 'method' => 'Method is required'] as $param => $message) {
            if (!isset($data[$param]) || (is_string($data[$param]) && trim($data[$param]) === '')) {
                throw new \FOSSBilling\InformationException($message);
            }
        }
        $model = self::serviceByOrderId($data['order_id'], $clientId);
        return self::customCall($model, $data['method'], $data);
    }

    /** Api/Admin.php `__call`: any method name not defined on the API class; order_id required. */
    public static function adminCall(string $name, array $data)
    {
        if (!isset($data['order_id'])) {
            throw new \FOSSBilling\Exception('Order ID is required');
        }
        $model = self::serviceByOrderId($data['order_id']);
        return self::customCall($model, $name, $data);
    }

    /**
     * callOnAdapter: no plugin name -> nothing; no file under PATH_LIBRARY -> nothing (logged when
     * DEBUG); then the RELATIVE require_once, `new $plugin($config)` with plugin_config decoded,
     * the method_exists check (code 3125), and the call with ($data, $order_data, $params).
     */
    private static function callOnAdapter(array $model, $method, array $params = [])
    {
        $plugin = $model['plugin'];
        if (empty($plugin)) {
            return null;
        }
        $file = 'Plugin/' . $plugin . '/' . $plugin . '.php';
        if (!file_exists(PATH_LIBRARY . '/' . $file)) {
            if (DEBUG) {
                error_log("Plugin class file {$file} was not found");
            }
            return null;
        }

        require_once $file;

        $config = json_decode($model['plugin_config'] ?? '', true) ?? [];
        $adapter = new $plugin($config);

        if (!method_exists($adapter, $method)) {
            throw new \FOSSBilling\Exception('Plugin :plugin does not support action :action', [':plugin' => $plugin, ':action' => $method], 3125);
        }

        $order = StandInOrder::orderOfService($model);
        $order_data = StandInOrder::toApiArray($order);
        $data = self::toApiArray($model);
        StandInTrace::$calls[] = ['method' => $method, 'params' => $params];

        return $adapter->$method($data, $order_data, $params);
    }
}

/** What the stand-in saw the plug-in being called with (for the test's assertions). */
final class StandInTrace
{
    public static array $calls = [];
}
