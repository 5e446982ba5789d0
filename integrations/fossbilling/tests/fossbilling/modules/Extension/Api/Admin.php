<?php

declare(strict_types=1);

namespace Box\Mod\Extension\Api;

use FOSSBilling\Validation\Api\RequiredParams;

/**
 * STAND-IN (test only) for src/modules/Extension/Api/Admin.php of FOSSBilling 0.8.5: what the
 * Extensions page calls. get_list (L31) lists the extensions; activate (L163) is the page's
 * "Activate" button: {id, type}; config_save (L274) is how a module's settings page saves, e.g.
 * the order module's (ext "mod_order", order_renewal_logic).
 */
class Admin extends \FOSSBilling\Api\AbstractApi
{
    public function get_list($data)
    {
        return $this->getService()->getExtensionsList($data);
    }

    #[RequiredParams(['id' => 'Extension ID was not passed', 'type' => 'Extension type was not passed'])]
    public function activate($data)
    {
        $this->checkPermissions('extension', 'manage_extensions');

        return $this->getService()->activateExistingExtension($data);
    }

    #[RequiredParams(['ext' => 'Parameter "ext" was not passed'])]
    public function config_save($data)
    {
        return $this->getService()->setConfig($data);
    }
}
