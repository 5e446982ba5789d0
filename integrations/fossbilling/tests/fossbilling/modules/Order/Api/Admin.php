<?php

declare(strict_types=1);

namespace Box\Mod\Order\Api;

/**
 * STAND-IN (test only) for src/modules/Order/Api/Admin.php of FOSSBilling 0.8.5 (L127-343): the
 * buttons of an order's admin page. activate; renew (a pending_setup / failed_setup order is
 * activated instead); suspend; unsuspend (only suspended orders); cancel; uncancel (only canceled
 * orders); delete (force_delete goes on past the service's exception); update (here only its
 * expires_at: Service::updateOrder L1098-1104); update_config (the order's form data); service (the
 * order's service, for the admin's service tab).
 */
class Admin extends \FOSSBilling\Api\AbstractApi
{
    public function activate($data)
    {
        return $this->getService()->activateOrder($this->order($data), $data);
    }

    public function renew($data)
    {
        $order = $this->order($data);
        if ($order->status == \Model_ClientOrder::STATUS_PENDING_SETUP || $order->status == \Model_ClientOrder::STATUS_FAILED_SETUP) {
            return $this->activate($data);
        }

        return $this->getService()->renewOrder($order);
    }

    public function suspend($data)
    {
        return $this->getService()->suspendFromOrder($this->order($data), $data['reason'] ?? null);
    }

    public function unsuspend($data)
    {
        $order = $this->order($data);
        if ($order->status != \Model_ClientOrder::STATUS_SUSPENDED) {
            throw new \FOSSBilling\InformationException('Only suspended orders can be unsuspended');
        }

        return $this->getService()->unsuspendFromOrder($order);
    }

    public function cancel($data)
    {
        return $this->getService()->cancelFromOrder($this->order($data), $data['reason'] ?? null);
    }

    public function uncancel($data)
    {
        $order = $this->order($data);
        if ($order->status != \Model_ClientOrder::STATUS_CANCELED) {
            throw new \FOSSBilling\InformationException('Only canceled orders can be uncanceled');
        }

        return $this->getService()->uncancelFromOrder($order);
    }

    public function delete($data)
    {
        return $this->getService()->deleteFromOrder($this->order($data), !empty($data['force_delete']));
    }

    public function update($data)
    {
        $order = $this->order($data);
        if (!empty($data['expires_at'])) {
            $order->expires_at = date('Y-m-d H:i:s', strtotime((string) $data['expires_at']));
        }
        $this->getDi()['db']->store($order);

        return true;
    }

    public function update_config($data)
    {
        $order = $this->order($data);
        $order->config = json_encode($data['config'] ?? []);
        $this->getDi()['db']->store($order);

        return true;
    }

    public function service($data)
    {
        return $this->getService()->getOrderServiceData($this->order($data), $this->getIdentity());
    }

    private function order($data): \Model_ClientOrder
    {
        return $this->getDi()['db']->getExistingModelById('ClientOrder', $data['id'] ?? 0, 'Order not found');
    }
}
