<?php
/**
 * License Bridge: a WHMCS server (provisioning) module for license-bridge.
 *
 * WHMCS runs these functions for a licence product (or product addon) whose module is
 * "License Bridge"; each one calls the bridge's provisioning API (/provision/v1) synchronously.
 * The bridge is the module's server: Hostname (else IP Address), Port and Secure give its URL,
 * the Access Hash (else Password) holds its PROVISIONING_TOKEN.
 *
 * Layout and function names follow WHMCS's provisioning module conventions
 * (https://developers.whmcs.com/provisioning-modules/): modules/servers/<name>/<name>.php,
 * functions <name>_<Function>($params), "success" or an error message as the result. The name,
 * "licensebridge", is lowercase letters and digits only, as WHMCS's "Getting Started" asks of a
 * module name (an earlier release was called "license_bridge": the README says how to move).
 * PHP 8.1+ with curl and json only (no mbstring); no Composer. See integrations/whmcs/README.md.
 */

if (!defined('WHMCS')) {
    die('This file cannot be accessed directly');
}

// The shared core (copies of integrations/shared/, written by `npm run integrations:sync`).
require_once __DIR__ . '/lib/LicenseBridgeRules.php';
require_once __DIR__ . '/lib/LicenseBridgeMessages.php';
require_once __DIR__ . '/lib/LicenseBridgeClient.php';
require_once __DIR__ . '/lib/Params.php';
require_once __DIR__ . '/lib/Actions.php';

use LicenseBridgeWhmcs\Actions;
use LicenseBridgeWhmcs\Params;

function licensebridge_MetaData(): array
{
    return [
        'DisplayName' => 'License Bridge',
        'APIVersion' => '1.1',
        'RequiresServer' => true,
        'DefaultNonSSLPort' => '80',
        'DefaultSSLPort' => '443',
    ];
}

/** The product's (or addon's) Module Settings. Nothing secret here: the token lives on the server. */
function licensebridge_ConfigOptions(array $params = []): array
{
    return [
        Params::OPTION_NAMES[Params::OPTION_TIMEOUT] => [
            'FriendlyName' => Params::OPTION_NAMES[Params::OPTION_TIMEOUT],
            'Type' => 'text',
            'Size' => '4',
            'Default' => '25',
            'Description' => 'seconds (5-120) to wait for the bridge on Create, Suspend, ...; keep it above the bridge\'s'
                . ' PROVISION_WAIT_SECONDS (default 20). Pages wait at most 10.',
        ],
        Params::OPTION_NAMES[Params::OPTION_NO_EMAIL] => [
            'FriendlyName' => Params::OPTION_NAMES[Params::OPTION_NO_EMAIL],
            'Type' => 'yesno',
            'Description' => 'Tick to keep the client\'s e-mail and name from the bridge; the bridge then mails the install'
                . ' command to no one.',
        ],
        Params::OPTION_NAMES[Params::OPTION_ADDON_PRODUCT] => [
            'FriendlyName' => Params::OPTION_NAMES[Params::OPTION_ADDON_PRODUCT],
            'Type' => 'text',
            'Size' => '20',
            'Description' => 'Product addons only: the product key in the bridge\'s config/products.json (empty:'
                . ' "addon-<addon id>"). Products always use their product id.',
        ],
    ];
}

function licensebridge_CreateAccount(array $params): string
{
    return Actions::run('CreateAccount', $params, fn (Actions $a) => $a->create());
}

function licensebridge_SuspendAccount(array $params): string
{
    return Actions::run('SuspendAccount', $params, fn (Actions $a) => $a->suspend());
}

function licensebridge_UnsuspendAccount(array $params): string
{
    return Actions::run('UnsuspendAccount', $params, fn (Actions $a) => $a->unsuspend());
}

function licensebridge_TerminateAccount(array $params): string
{
    return Actions::run('TerminateAccount', $params, fn (Actions $a) => $a->terminate());
}

/** Runs when a renewal invoice is paid. */
function licensebridge_Renew(array $params): string
{
    return Actions::run('Renew', $params, fn (Actions $a) => $a->renew());
}

/** Runs for a paid upgrade/downgrade and for the admin's Change Package button; $params['pid'] is the new product. */
function licensebridge_ChangePackage(array $params): string
{
    return Actions::run('ChangePackage', $params, fn (Actions $a) => $a->changePackage());
}

/** The server page's Test Connection button: WHMCS passes the server's fields. */
function licensebridge_TestConnection(array $params): array
{
    $result = Actions::run('TestConnection', $params, fn (Actions $a) => $a->testConnection());
    return is_array($result) ? $result : ['success' => false, 'error' => (string) $result];
}

function licensebridge_AdminServicesTabFields(array $params): array
{
    $result = Actions::run('AdminServicesTabFields', $params, fn (Actions $a) => $a->adminTabFields());
    return is_array($result) ? $result : ['License Bridge' => Actions::html((string) $result)];
}

function licensebridge_AdminCustomButtonArray(): array
{
    return [
        'Change IP' => 'ChangeIp',
        'Refresh' => 'Refresh',
    ];
}

/** Admin "Change IP": save the new Dedicated IP (or "IP Address" field) on the service first, then click. */
function licensebridge_ChangeIp(array $params): string
{
    return Actions::run('ChangeIp', $params, fn (Actions $a) => $a->changeIp());
}

function licensebridge_Refresh(array $params): string
{
    return Actions::run('Refresh', $params, fn (Actions $a) => $a->refresh());
}

function licensebridge_ClientArea(array $params): array|string
{
    $result = Actions::run('ClientArea', $params, fn (Actions $a) => $a->clientArea());
    // Even a failure renders the page (without details, which stay in the module log).
    return is_array($result) ? $result : ['templatefile' => 'clientarea', 'vars' => Actions::emptyClientVars(new Params($params), true)];
}

/** The client's menu entry; it opens the page with the change-IP form. */
function licensebridge_ClientAreaCustomButtonArray(): array
{
    return ['Change licence IP' => 'ClientChangeIp'];
}

/** Functions a client may call (with the buttons above): only the change of IP. */
function licensebridge_ClientAreaAllowedFunctions(): array
{
    return ['Change licence IP' => 'ClientChangeIp'];
}

/** The client's change of IP: the new IP comes from the form (POST field lb_new_ip). */
function licensebridge_ClientChangeIp(array $params): string|array
{
    $request = array_merge(is_array($_REQUEST ?? null) ? $_REQUEST : [], is_array($_POST ?? null) ? $_POST : []);
    $method = is_string($_SERVER['REQUEST_METHOD'] ?? null) ? $_SERVER['REQUEST_METHOD'] : 'GET';
    return Actions::run('ClientChangeIp', $params, fn (Actions $a) => $a->clientChangeIp($request, $method));
}
