<?php

declare(strict_types=1);

namespace Box\Mod\Servicelicensebridge\Api;

use FOSSBilling\Validation\Api\RequiredParams;

/**
 * The admin's calls (`admin/servicelicensebridge/<method>`): the order's service tab
 * (templates/admin/mod_servicelicensebridge_manage.html.twig), the settings page
 * (templates/admin/mod_servicelicensebridge_settings.html.twig), and the move-over of orders of
 * the old Servicecustom plug-in.
 */
class Admin extends \FOSSBilling\Api\AbstractApi
{
    #[RequiredParams(['order_id' => 'Order ID is required'])]
    public function license($data): array
    {
        $service = $this->getService();

        return $service->licence($service->adminOrder($data['order_id']));
    }

    #[RequiredParams(['order_id' => 'Order ID is required', 'new_ip' => 'Enter the new IP address'])]
    public function change_ip($data): array
    {
        $this->checkPermissions('servicelicensebridge', 'manage');
        $service = $this->getService();

        return $service->changeIp($service->adminOrder($data['order_id']), $data['new_ip'], true);
    }

    /** package_identifier: a product id of the bridge's config/products.json (e.g. LiteSpeed 13 -> 14). */
    #[RequiredParams(['order_id' => 'Order ID is required', 'package_identifier' => 'Enter the bridge product'])]
    public function change_package($data): array
    {
        $this->checkPermissions('servicelicensebridge', 'manage');
        $service = $this->getService();

        return $service->changePackage($service->adminOrder($data['order_id']), $data['package_identifier']);
    }

    /** An order of the old Servicecustom plug-in becomes this module's, keeping its licence. */
    #[RequiredParams(['order_id' => 'Order ID is required'])]
    public function adopt_custom_order($data): array
    {
        $this->checkPermissions('servicelicensebridge', 'manage');

        return $this->getService()->adoptCustomOrder($data['order_id']);
    }

    /** The settings without the token (only whether one is saved). */
    public function settings($data): array
    {
        $this->getDi()['mod_service']('extension')->hasManagePermission('servicelicensebridge');

        return $this->getService()->getSettings();
    }

    /** url, token (blank: keep the saved one), timeout, service_prefix, log_calls. */
    public function settings_save($data): bool
    {
        $this->getDi()['mod_service']('extension')->hasManagePermission('servicelicensebridge');

        return $this->getService()->saveSettings($data);
    }

    public function test_connection($data): array
    {
        $this->getDi()['mod_service']('extension')->hasManagePermission('servicelicensebridge');

        return $this->getService()->testConnection();
    }
}
