<?php
/** Loads the module's library; hooks.php requires it inside each hook's try/catch. */

if (!defined('WHMCS')) {
    die('This file cannot be accessed directly');
}

require_once __DIR__ . '/Signer.php';
require_once __DIR__ . '/EventBuilder.php';
require_once __DIR__ . '/Sender.php';
require_once __DIR__ . '/Queue.php';
require_once __DIR__ . '/Whmcs.php';
require_once __DIR__ . '/Bridge.php';
