<?php

declare(strict_types=1);

namespace Box\Mod\Servicecustom;

/**
 * STAND-IN (test only) for src/modules/Servicecustom/Service.php of FOSSBilling 0.8.5 (commit
 * 544bf2b8), kept to show why the old LicenseBridge plug-in could not work on a stock install:
 *  - action_create (L93-110): the service copies the product's plugin name and plugin_config;
 *  - action_activate ... (L112-209): the plug-in's method of the same name, through callOnAdapter;
 *  - callOnAdapter (L289-325): no plug-in name -> nothing; no file PATH_LIBRARY/Plugin/<Name>/<Name>.php
 *    -> nothing either (an error_log line when DEBUG): the action SUCCEEDS with nothing done; else
 *    a RELATIVE `require_once 'Plugin/<Name>/<Name>.php'` (Path::normalize of the relative path),
 *    which PHP resolves through include_path, then this file's folder, then the working
 *    directory, none of which is library/ on a stock install; then `new <Name>($config)` and the call.
 */
class Service implements \FOSSBilling\InjectionAwareInterface
{
    protected ?\Pimple\Container $di = null;

    public function setDi(\Pimple\Container $di): void
    {
        $this->di = $di;
    }

    public function action_create(\Model_ClientOrder $order)
    {
        $product = $this->di['mod_service']('product')->findProductById((int) $order->product_id);
        $model = $this->di['db']->dispense('ServiceCustom');
        $model->client_id = $order->client_id;
        $model->plugin = $product->getPlugin();
        $model->plugin_config = $product->getPluginConfig();
        $model->config = $order->config;
        $model->created_at = date('Y-m-d H:i:s');
        $model->updated_at = date('Y-m-d H:i:s');
        $this->di['db']->store($model);

        return $model;
    }

    public function action_activate(\Model_ClientOrder $order): bool
    {
        $model = $this->di['mod_service']('order')->getOrderService($order);
        if (!$model instanceof \Model_ServiceCustom) {
            throw new \FOSSBilling\Exception('Could not activate order. Service was not created', null, 7456);
        }
        $this->callOnAdapter($model, 'activate');

        return true;
    }

    public function action_delete(\Model_ClientOrder $order): bool
    {
        $model = $this->di['mod_service']('order')->getOrderService($order);
        if ($model instanceof \Model_ServiceCustom) {
            $this->callOnAdapter($model, 'delete');
            $this->di['db']->trash($model);
        }

        return true;
    }

    private function callOnAdapter(\Model_ServiceCustom $model, $method, $params = [])
    {
        $plugin = $model->plugin;
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

        $config = json_decode($model->plugin_config ?? '', true) ?? [];
        $adapter = new $plugin($config);
        if (!method_exists($adapter, $method)) {
            throw new \FOSSBilling\Exception('Plugin :plugin does not support action :action', [':plugin' => $plugin, ':action' => $method], 3125);
        }

        return $adapter->$method([], [], $params);
    }
}
