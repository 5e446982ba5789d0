<?php

declare(strict_types=1);

namespace Box\Mod\Order\Api;

/**
 * STAND-IN (test only) for src/modules/Order/Api/Client.php of FOSSBilling 0.8.5: service (L80-89),
 * what the client's order page gives its service template (`client.order_service`): the client's
 * own order, active.
 */
class Client extends \FOSSBilling\Api\AbstractApi
{
    public function service($data)
    {
        $order = $this->getDi()['db']->findOne('ClientOrder', 'id = :id AND client_id = :client_id', [':id' => $data['id'] ?? 0, ':client_id' => $this->getIdentity()->id]);
        if (!$order instanceof \Model_ClientOrder) {
            throw new \FOSSBilling\InformationException('Order not found');
        }
        if ($order->status !== \Model_ClientOrder::STATUS_ACTIVE) {
            throw new \FOSSBilling\InformationException('Order is not active');
        }

        return $this->getService()->getOrderServiceData($order, $this->getIdentity());
    }
}
