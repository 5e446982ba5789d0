<?php

declare(strict_types=1);

/**
 * STAND-IN for FOSSBilling's src/load.php (test only, never shipped): what a FOSSBilling request
 * sets up before a module runs, as far as the LicenseBridge plug-in can tell.
 *
 * Imitated from FOSSBilling 0.8.5 (src/load.php, commit 544bf2b8):
 *  - PATH_ROOT is the folder of load.php, PATH_LIBRARY is PATH_ROOT/library (L173-183);
 *  - DEBUG comes from the config (L248); here on, so FOSSBilling\Exception logs its stack traces;
 *  - the timezone is set from the config (L245);
 *  - error_log goes to PATH_LOG/php_error.log (L292), PATH_LOG = PATH_DATA/log;
 *  - NOTHING adds PATH_LIBRARY to include_path (no set_include_path outside the installer).
 * What the admin's php.ini / PHP-FPM pool says about include_path is in php-settings.json (the
 * test writes it), applied here the way PHP applies php.ini: before any FOSSBilling code runs.
 * A web request's working directory is the FOSSBilling root (index.php's folder).
 */

define('PATH_ROOT', __DIR__);
define('PATH_LIBRARY', PATH_ROOT . DIRECTORY_SEPARATOR . 'library');
define('PATH_MODS', PATH_ROOT . DIRECTORY_SEPARATOR . 'modules');
define('PATH_DATA', PATH_ROOT . DIRECTORY_SEPARATOR . 'data');
define('PATH_LOG', PATH_DATA . DIRECTORY_SEPARATOR . 'log');
define('DEBUG', true);

$phpSettings = json_decode((string) @file_get_contents(PATH_ROOT . '/php-settings.json'), true) ?: [];
if (isset($phpSettings['include_path'])) {
    ini_set('include_path', $phpSettings['include_path']);
}

date_default_timezone_set('UTC');
@mkdir(PATH_LOG, 0o755, true);
ini_set('log_errors', '1');
ini_set('error_log', PATH_LOG . DIRECTORY_SEPARATOR . 'php_error.log');
chdir(PATH_ROOT);

require_once PATH_LIBRARY . '/FOSSBilling/Exception.php';
require_once PATH_ROOT . '/db.php';
require_once PATH_MODS . '/Order/Service.php';
require_once PATH_MODS . '/Servicecustom/Service.php';
