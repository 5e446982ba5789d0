<?php
/**
 * license-bridge client function "License & IP": the licence (status, IP, install command) and a
 * form to move it to another IP within the product's max_ip_changes.
 *
 * A HostBill widget (client function): `class widget_<name> extends HostingWidget` in
 * widgets/<name>/widget.<name>.php; HostBill calls clientFunction($module) with this account's
 * connected provisioning module and renders the returned [template, variables] with Smarty from
 * this folder (HostBill's sample widget "rebootsample", tallship/oop_devkit). The admin enables it
 * per product under Products -> Client Functions.
 */

// Runs inside HostBill only (see class.license_bridge.php).
class_exists('HostingWidget') or exit('No direct access');

class widget_lblicence extends HostingWidget
{
    protected $description = 'Shows the customer the licence (status, IP, install command) and lets them move it to another IP within the product\'s limit.';
    protected $widgetfullname = 'License & IP';

    /**
     * @param license_bridge $module this account's provisioning module, connected
     * @return array ['licence.tpl', variables]
     */
    public function clientFunction(&$module)
    {
        $vars = ['lb_error' => null, 'lb_info' => null, 'licence' => null, 'can_change_ip' => false, 'lb_new_ip' => ''];
        if (!is_object($module) || !method_exists($module, 'lbLicence') || !method_exists($module, 'lbChangeIp')) {
            $vars['lb_error'] = 'This function works only with the License Bridge module.';
            return ['licence.tpl', $vars];
        }

        $change = null;
        if (($_SERVER['REQUEST_METHOD'] ?? 'GET') === 'POST' && ($_POST['lb_action'] ?? null) === 'changeip') {
            $newIp = is_string($_POST['new_ip'] ?? null) ? trim($_POST['new_ip']) : '';
            $change = $module->lbChangeIp($newIp);
            if (!$change['ok']) {
                $vars['lb_new_ip'] = substr($newIp, 0, 64);
            }
        }

        $vars = array_merge($vars, $module->lbLicence());
        if ($change !== null) {
            // The change's own outcome is what the customer asked about; it comes first.
            $vars['lb_error'] = $change['error'] ?? $vars['lb_error'];
            $vars['lb_info'] = $change['info'];
        }
        return ['licence.tpl', $vars];
    }
}
