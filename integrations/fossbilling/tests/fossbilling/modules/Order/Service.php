<?php

declare(strict_types=1);

namespace Box\Mod\Order;

/**
 * STAND-IN (test only) for src/modules/Order/Service.php of FOSSBilling 0.8.5 (commit 544bf2b8): the
 * order flows that call a product type's service module, and what each does with its exception.
 *  - getOrderService (L234-258): a built-in type's service is its model (ServiceCustom, ...); any
 *    other type's is the row of table service_<type> with id = the order's service_id (findOne);
 *  - _callOnService (L992-1028): a built-in type's service gets action_<action>($order); any other
 *    type's service module gets <action>($o, $service), where $o is the order re-read as a plain
 *    client_order bean and $service the plain service_<type> bean (load) or null; a module without
 *    the method is skipped with a log line (the action then succeeds);
 *  - createFromOrder (L931-985): no service yet -> the module's create() (or action_create) must
 *    return an object whose id becomes the order's service_id; then activate: an exception makes
 *    the order failed_setup, adds a status note with its message and is thrown on; on success the
 *    expiry moves by one period from the old expiry (or now), the order is active;
 *  - activateOrder (L893-928): an active order is left alone; only pending_setup / failed_setup;
 *  - renewOrder / renewFromOrder (L1132-1198): an exception -> failed_renew + note, thrown on; on
 *    success the expiry moves by one period from the old expiry, or per the order module's
 *    "order_renewal_logic" setting (from_today: from now; from_greater: the later of the two);
 *  - suspendFromOrder (only active orders), unsuspendFromOrder, cancelFromOrder (not canceled /
 *    pending_setup / failed_setup orders; the expiry is cleared), uncancelFromOrder (expiry = one
 *    period from now), deleteFromOrder (an exception stops it unless forced), L1200-1440;
 *  - getOrderServiceData (L1654-1670): the module's toApiArray($service, true, $identity) (the
 *    client's and admin's order pages, and the order e-mails);
 *  - onAfterAdminOrderActivate (L81-104): the activation e-mail is given getOrderServiceData($order);
 *  - assertOrderUsable (L1631): an order past its expiry is not usable.
 */
class Service implements \FOSSBilling\InjectionAwareInterface
{
    private const BUILT_IN = ['custom', 'license', 'downloadable', 'hosting', 'domain'];

    /** What the order e-mails were given (the stand-in sends none). */
    public static array $emails = [];

    protected ?\Pimple\Container $di = null;

    public function setDi(\Pimple\Container $di): void
    {
        $this->di = $di;
    }

    public function getOrderService(\Model_ClientOrder $order)
    {
        if ($order->service_id !== null) {
            if (in_array($order->service_type, self::BUILT_IN, true)) {
                return $this->di['db']->load('Service' . ucfirst((string) $order->service_type), $order->service_id);
            }

            return $this->di['db']->findOne('service_' . $order->service_type, 'id = :id', [':id' => $order->service_id]);
        }

        return null;
    }

    public function getConfig(\Model_ClientOrder $model)
    {
        return json_decode($model->config ?? '', true) ?? [];
    }

    public function saveStatusChange(\Model_ClientOrder $order, $notes = null): void
    {
        $status = $this->di['db']->dispense('ClientOrderStatus');
        $status->client_order_id = $order->id;
        $status->status = $order->status;
        $status->notes = $notes;
        $status->created_at = date('Y-m-d H:i:s');
        $this->di['db']->store($status);
    }

    public function assertOrderUsable(\Model_ClientOrder $order): void
    {
        if ($order->expires_at !== null && strtotime((string) $order->expires_at) <= time()) {
            throw new \FOSSBilling\InformationException('Subscription expired');
        }
    }

    public function activateOrder(\Model_ClientOrder $order, $data = []): bool
    {
        $order = $this->di['db']->load('ClientOrder', $order->id);
        $force = !empty($data['force']);
        if ($order->status === \Model_ClientOrder::STATUS_ACTIVE && !$force) {
            return true;
        }
        if (!in_array($order->status, [\Model_ClientOrder::STATUS_PENDING_SETUP, \Model_ClientOrder::STATUS_FAILED_SETUP]) && !$force) {
            throw new \FOSSBilling\Exception('Only pending setup or failed orders can be activated');
        }
        $this->createFromOrder($order);
        try {
            self::$emails[] = ['code' => 'mod_service' . $order->service_type . '_activated', 'service' => $this->getOrderServiceData($this->di['db']->load('ClientOrder', $order->id))];
        } catch (\Exception $e) {
            error_log('Failed to send order activation email: ' . $e->getMessage());
        }

        return true;
    }

    public function createFromOrder(\Model_ClientOrder $order)
    {
        $service = $this->getOrderService($order);
        if (!is_object($service)) {
            $s = $this->di['mod']('service' . $order->service_type)->getService();
            if (method_exists($s, 'create') || method_exists($s, 'action_create')) {
                $service = $this->_callOnService($order, \Model_ClientOrder::ACTION_CREATE);
                if (!is_object($service)) {
                    throw new \FOSSBilling\Exception('Error creating ' . $order->service_type . ' service for order ' . $order->id);
                }
                $order->service_id = $service->id;
                $order->updated_at = date('Y-m-d H:i:s');
                $this->di['db']->store($order);
            }
        }

        try {
            $result = $this->_callOnService($order, \Model_ClientOrder::ACTION_ACTIVATE);
        } catch (\Exception $e) {
            $order->status = \Model_ClientOrder::STATUS_FAILED_SETUP;
            $this->di['db']->store($order);
            $this->saveStatusChange($order, $e->getMessage());

            throw $e;
        }

        if (!empty($order->period)) {
            $from = $order->expires_at === null ? time() : strtotime((string) $order->expires_at);
            $order->expires_at = date('Y-m-d H:i:s', $this->di['period']($order->period)->getExpirationTime($from));
        }
        $order->status = \Model_ClientOrder::STATUS_ACTIVE;
        $order->activated_at = date('Y-m-d H:i:s');
        $order->suspended_at = null;
        $order->canceled_at = null;
        $order->updated_at = date('Y-m-d H:i:s');
        $this->di['db']->store($order);
        $this->saveStatusChange($order, 'Order activated');

        return $result;
    }

    protected function _callOnService(\Model_ClientOrder $order, $action)
    {
        $repo = $this->di['mod_service']('service' . $order->service_type);
        if (in_array($order->service_type, self::BUILT_IN, true)) {
            $m = 'action_' . $action;
            if (!method_exists($repo, $m) || !is_callable([$repo, $m])) {
                throw new \FOSSBilling\Exception('Service ' . $order->service_type . ' do not support ' . $m);
            }

            return $repo->$m($order);
        }

        $o = $this->di['db']->findOne('client_order', 'id = :id', [':id' => $order->id]);
        $service = null;
        if ($order->service_id) {
            $service = $this->di['db']->load('service_' . $order->service_type, $order->service_id);
        }
        if (method_exists($repo, $action) && is_callable([$repo, $action])) {
            return $repo->$action($o, $service);
        }
        error_log("Service {$order->service_type} does not support action {$action}.");

        return null;
    }

    public function renewOrder(\Model_ClientOrder $order): bool
    {
        $this->renewFromOrder($order);

        return true;
    }

    public function renewFromOrder(\Model_ClientOrder $order): void
    {
        try {
            $this->_callOnService($order, \Model_ClientOrder::ACTION_RENEW);
        } catch (\Exception $e) {
            $order->status = \Model_ClientOrder::STATUS_FAILED_RENEW;
            $this->di['db']->store($order);
            $this->saveStatusChange($order, $e->getMessage());

            throw $e;
        }

        if (!empty($order->period)) {
            $from = $order->expires_at === null ? time() : strtotime((string) $order->expires_at);
            $logic = $this->di['mod_config']('order')['order_renewal_logic'] ?? '';
            if ($logic == 'from_today') {
                $from = time();
            } elseif ($logic == 'from_greater') {
                $from = strtotime((string) $order->expires_at) > time() ? strtotime((string) $order->expires_at) : time();
            }
            $order->expires_at = date('Y-m-d H:i:s', $this->di['period']($order->period)->getExpirationTime($from));
        }
        $order->status = \Model_ClientOrder::STATUS_ACTIVE;
        $order->suspended_at = null;
        $order->unsuspended_at = null;
        $order->canceled_at = null;
        $order->updated_at = date('Y-m-d H:i:s');
        $this->di['db']->store($order);
        $this->saveStatusChange($order, 'Order renewed');
    }

    public function suspendFromOrder(\Model_ClientOrder $order, $reason = null, $skipEvent = false): bool
    {
        if ($order->status != \Model_ClientOrder::STATUS_ACTIVE) {
            throw new \FOSSBilling\InformationException('Only active orders can be suspended');
        }
        $this->_callOnService($order, \Model_ClientOrder::ACTION_SUSPEND);
        $order->status = \Model_ClientOrder::STATUS_SUSPENDED;
        $order->reason = $reason;
        $order->suspended_at = date('Y-m-d H:i:s');
        $order->updated_at = date('Y-m-d H:i:s');
        $this->di['db']->store($order);
        $this->saveStatusChange($order, $reason === null ? 'Order suspended' : 'Order suspended for ' . $reason);

        return true;
    }

    public function unsuspendFromOrder(\Model_ClientOrder $order): bool
    {
        $this->_callOnService($order, \Model_ClientOrder::ACTION_UNSUSPEND);
        $order->status = \Model_ClientOrder::STATUS_ACTIVE;
        $order->reason = null;
        $order->suspended_at = null;
        $order->unsuspended_at = date('Y-m-d H:i:s');
        $order->updated_at = date('Y-m-d H:i:s');
        $this->di['db']->store($order);
        $this->saveStatusChange($order, 'Order unsuspended');

        return true;
    }

    public function cancelFromOrder(\Model_ClientOrder $order, $reason = null, $skipEvent = false): bool
    {
        if (in_array($order->status, [\Model_ClientOrder::STATUS_CANCELED, \Model_ClientOrder::STATUS_PENDING_SETUP, \Model_ClientOrder::STATUS_FAILED_SETUP], true)) {
            throw new \FOSSBilling\Exception('Cannot cancel ' . $order->status . ' order');
        }
        $this->_callOnService($order, \Model_ClientOrder::ACTION_CANCEL);
        $order->status = \Model_ClientOrder::STATUS_CANCELED;
        $order->reason = $reason;
        $order->canceled_at = date('Y-m-d H:i:s');
        $order->expires_at = null;
        $order->suspended_at = null;
        $order->updated_at = date('Y-m-d H:i:s');
        $this->di['db']->store($order);
        $this->saveStatusChange($order, $reason === null ? 'Order canceled' : 'Canceled order for ' . $reason);

        return true;
    }

    public function uncancelFromOrder(\Model_ClientOrder $order): bool
    {
        $this->_callOnService($order, \Model_ClientOrder::ACTION_UNCANCEL);
        $expires = null;
        if ($order->period) {
            $expires = date('Y-m-d H:i:s', $this->di['period']($order->period)->getExpirationTime(time()));
        }
        $order->status = \Model_ClientOrder::STATUS_ACTIVE;
        $order->reason = null;
        $order->activated_at = date('Y-m-d H:i:s');
        $order->expires_at = $expires;
        $order->suspended_at = null;
        $order->canceled_at = null;
        $order->updated_at = date('Y-m-d H:i:s');
        $this->di['db']->store($order);
        $this->saveStatusChange($order, 'Activated canceled order');

        return true;
    }

    public function deleteFromOrder(\Model_ClientOrder $order, bool $forceDelete = false): bool
    {
        try {
            $this->_callOnService($order, \Model_ClientOrder::ACTION_DELETE);
        } catch (\Exception $e) {
            if (!$forceDelete) {
                throw $e;
            }
            error_log("{$e->getMessage()} in {$e->getFile()} : {$e->getFile()}");
        }
        foreach ($this->di['db']->find('ClientOrderStatus', 'client_order_id = :id', [':id' => $order->id]) as $status) {
            $this->di['db']->trash($status);
        }
        $this->di['db']->trash($order);

        return true;
    }

    public function getOrderServiceData(\Model_ClientOrder $order, $identity = null)
    {
        $service = $this->getOrderService($order);
        if (!is_object($service)) {
            return null;
        }
        $srepo = $this->di['mod_service']('service' . $order->service_type);
        if (!method_exists($srepo, 'toApiArray')) {
            return null;
        }

        return $srepo->toApiArray($service, true, $identity);
    }
}
