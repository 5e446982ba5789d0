<?php

declare(strict_types=1);

namespace Box\Mod\Servicelicensebridge\Api;

use FOSSBilling\Validation\Api\RequiredParams;

/**
 * The customer's calls (`client/servicelicensebridge/<method>`), made by the order page
 * (templates/client/mod_servicelicensebridge_manage.html.twig). Each takes the client's own,
 * active order of this product type; FOSSBilling's Dispatcher checks #[RequiredParams].
 */
class Client extends \FOSSBilling\Api\AbstractApi
{
    /** The licence with its install command and the IP changes left; never throws for a bridge failure. */
    #[RequiredParams(['order_id' => 'Order ID is required'])]
    public function license($data): array
    {
        $service = $this->getService();

        return $service->licence($service->clientOrder($data['order_id'], $this->getIdentity()));
    }

    /** Moves the licence to another IP, within the product's max_ip_changes. */
    #[RequiredParams(['order_id' => 'Order ID is required', 'new_ip' => 'Enter the new IP address'])]
    public function change_ip($data): array
    {
        $service = $this->getService();

        return $service->changeIp($service->clientOrder($data['order_id'], $this->getIdentity()), $data['new_ip']);
    }
}
