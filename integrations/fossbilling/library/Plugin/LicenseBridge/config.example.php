<?php

/**
 * LicenseBridge plug-in settings. Copy this file to config.php in the same folder
 * (library/Plugin/LicenseBridge/config.php) and fill it in; keep it readable by the web server's
 * user only (chmod 640). It is PHP, so a browser that reaches it sees nothing, and FOSSBilling's
 * .htaccess refuses direct requests for .php files other than index.php anyway.
 *
 * Why a file: FOSSBilling gives a custom-product plug-in no settings screen. The constructor's
 * "plugin config" is a database column no screen writes; the product's "Custom Parameters" are
 * not passed to the plug-in; the order's fields are typed by the customer. A file beside the
 * plug-in is read the same way by web requests and by cron.
 */

return [
    // The bridge's address: scheme, host and port, without /provision/v1.
    'url' => 'https://bridge.example.com:8080',

    // The bridge's PROVISIONING_TOKEN (in sandbox mode: `provisioning_token` in
    // data/sandbox-credentials.json). Sent only in the Authorization header; never logged or shown.
    'token' => 'paste-the-bridge-PROVISIONING_TOKEN-here',

    // FOSSBilling product id => the bridge's product id (a key of the bridge's config/products.json).
    // An order of a product missing here is refused at activation, before anything is bought.
    'products' => [
        // 5 => '12',   // "cPanel licence" => cPanel
        // 6 => '13',   // "LiteSpeed licence" => LiteSpeed (3 IP changes)
    ],

    // The name of the order form's IP field (Form Builder field "Name"). Default 'ip'.
    'ip_field' => 'ip',

    // Seconds to wait for the bridge; keep it above the bridge's PROVISION_WAIT_SECONDS (20). Default 30.
    'timeout' => 30,

    // Put before the order id to make the bridge's service_identifier (e.g. 'fb-' gives fb-42).
    // Only needed when several panels share one bridge. Never change it once orders exist.
    'service_prefix' => '',

    // true: write every bridge call (without the token) to FOSSBilling's PHP error log
    // (data/log/php_error.log). Failures are always written. Default false.
    'log_calls' => false,
];
