<?php

declare(strict_types=1);

/**
 * STAND-IN (test only) for src/load.php of FOSSBilling 0.8.5 (commit 544bf2b8): what a request sets
 * up before any module runs, as far as a module can tell.
 *  - preInit (L170-210): PATH_ROOT is this folder; the Composer autoloader (vendor/autoload.php) is
 *    required before anything else; PATH_LIBRARY, PATH_THEMES, PATH_MODS;
 *  - init (L215-282): DEBUG (here on, so FOSSBilling\Exception logs its stack traces), the
 *    timezone, PATH_DATA, PATH_LOG, and the DI container from di.php;
 *  - postInit (L287-303): errors are logged to PATH_LOG/php_error.log.
 * NOTHING here changes include_path (no set_include_path anywhere in FOSSBilling outside the
 * installer), and the working directory is whatever it is: index.php's folder for a web request,
 * the caller's for `php cron.php`.
 */

define('PATH_ROOT', __DIR__);
define('PATH_VENDOR', PATH_ROOT . DIRECTORY_SEPARATOR . 'vendor');
require PATH_VENDOR . DIRECTORY_SEPARATOR . 'autoload.php';
define('PATH_LIBRARY', PATH_ROOT . DIRECTORY_SEPARATOR . 'library');
define('PATH_THEMES', PATH_ROOT . DIRECTORY_SEPARATOR . 'themes');
define('PATH_MODS', PATH_ROOT . DIRECTORY_SEPARATOR . 'modules');

date_default_timezone_set('UTC');
define('DEBUG', true);
define('PATH_DATA', PATH_ROOT . DIRECTORY_SEPARATOR . 'data');
define('PATH_LOG', PATH_DATA . DIRECTORY_SEPARATOR . 'log');
@mkdir(PATH_LOG, 0o755, true);

$di = require PATH_ROOT . DIRECTORY_SEPARATOR . 'di.php';

ini_set('log_errors', '1');
ini_set('error_log', PATH_LOG . DIRECTORY_SEPARATOR . 'php_error.log');
error_reporting(E_ALL);

return $di;
