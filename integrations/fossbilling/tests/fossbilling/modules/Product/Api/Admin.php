<?php

declare(strict_types=1);

namespace Box\Mod\Product\Api;

/**
 * STAND-IN (test only) for src/modules/Product/Api/Admin.php of FOSSBilling 0.8.5: get_types (L74),
 * the product types offered when a product is created; update_config (L171), the form of a
 * product's "Configuration" tab.
 */
class Admin extends \FOSSBilling\Api\AbstractApi
{
    public function get_types($data)
    {
        return $this->getService()->getTypes();
    }

    public function update_config($data)
    {
        $this->checkPermissions('product', 'manage_products');
        $service = $this->getService();

        return $service->updateConfig($service->findProductById((int) ($data['id'] ?? 0)), $data);
    }
}
