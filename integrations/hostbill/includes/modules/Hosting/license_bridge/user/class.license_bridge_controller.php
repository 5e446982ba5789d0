<?php
/**
 * license-bridge client-area controller: the licence on the customer's service page.
 *
 * HostBill calls accountdetails($params) of `class <module>_controller extends HBController` in
 * user/class.<module>_controller.php when the customer opens the service; $this->module is the
 * connected provisioning module and $params['account'] the account (real modules: Servertastic
 * SSL's and EasyDCIM's user controllers). Moving the licence to another IP is the "License & IP"
 * client function (widgets/lblicence).
 */

// Runs inside HostBill only (see class.license_bridge.php).
class_exists('HBController') or exit('No direct access');

class license_bridge_controller extends HBController
{
    public function accountdetails($params)
    {
        $account = is_array($params) && is_array($params['account'] ?? null) ? $params['account'] : [];
        $module = $this->module ?? null;
        if (is_object($module) && method_exists($module, 'lbLicence')) {
            $vars = $module->lbLicence($account['id'] ?? null);
        } else {
            $vars = ['licence' => null, 'can_change_ip' => false, 'lb_error' => 'The licence details cannot be shown right now.', 'lb_info' => null];
        }
        foreach ($vars as $name => $value) {
            $this->template->assign($name, $value);
        }
        $this->template->render(APPDIR_MODULES . 'Hosting/license_bridge/user/licence.tpl');
    }
}
