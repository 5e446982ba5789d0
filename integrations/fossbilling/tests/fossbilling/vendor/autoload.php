<?php

declare(strict_types=1);

/**
 * STAND-IN for the Composer autoloader of a FOSSBilling release (test only, never shipped).
 *
 * How the release's autoloader is made (FOSSBilling 0.8.5, commit 544bf2b8, Dockerfile L128-129):
 * the build rewrites composer.json's autoload section to
 *     "psr-4": {"Box\\Mod\\": "modules/"}, "classmap": ["library/"]
 * and runs `composer dump-autoload --optimize` in the folder that becomes the archive's root.
 * No `classmap-authoritative`, no `apcu-autoloader` (composer.json "config", L111-120).
 *
 * What Composer's ClassLoader then does (composer/composer src/Composer/Autoload/ClassLoader.php,
 * loadClass / findFile / findFileWithExtension), reduced to what matters here:
 *  1. the class map (every class found under library/ and vendor/ at build time; --optimize also
 *     lists the classes found under modules/ then);
 *  2. the map is not authoritative, so a class it does not list (a module uploaded to modules/
 *     after the release was built) goes to the PSR-4 rule: for the prefix Box\Mod\, the file
 *     modules/<the rest of the class name, "\" as "/">.php, if it exists;
 *  3. the file is loaded by that ABSOLUTE path (`include $file`): PHP's include_path and the working
 *     directory are never consulted.
 * The class map below is the stand-in's own library/ and vendor/ files; every stand-in module of
 * FOSSBilling and the module under test load through rule 2, as an uploaded module does.
 */

(static function (): void {
    $root = dirname(__DIR__);
    $classMap = [
        'Pimple\\Container' => $root . '/vendor/pimple/Container.php',
        'RedBeanPHP\\OODBBean' => $root . '/vendor/redbean/RedBean.php',
        'RedBeanPHP\\SimpleModel' => $root . '/vendor/redbean/RedBean.php',
        'RedBeanPHP\\RedException' => $root . '/vendor/redbean/RedBean.php',
        'RedBeanPHP\\RedException\\SQL' => $root . '/vendor/redbean/RedBean.php',
        'FOSSBilling\\Exception' => $root . '/library/FOSSBilling/Exception.php',
        'FOSSBilling\\InformationException' => $root . '/library/FOSSBilling/Exception.php',
        'FOSSBilling\\InjectionAwareInterface' => $root . '/library/FOSSBilling/InjectionAwareInterface.php',
        'FOSSBilling\\Module' => $root . '/library/FOSSBilling/Module.php',
        'FOSSBilling\\Api\\AbstractApi' => $root . '/library/FOSSBilling/Api/AbstractApi.php',
        'FOSSBilling\\Api\\Dispatcher' => $root . '/library/FOSSBilling/Api/Dispatcher.php',
        'FOSSBilling\\Validation\\Api\\RequiredParams' => $root . '/library/FOSSBilling/Validation/Api/RequiredParams.php',
        'Box_Database' => $root . '/library/Box/Database.php',
        'Box_Period' => $root . '/library/Box/Period.php',
        'Box_Crypt' => $root . '/library/Box/Crypt.php',
        'Model_Admin' => $root . '/library/Model/Models.php',
        'Model_Client' => $root . '/library/Model/Models.php',
        'Model_ClientOrder' => $root . '/library/Model/Models.php',
        'Model_ServiceCustom' => $root . '/library/Model/Models.php',
    ];
    $psr4 = ['Box\\Mod\\' => $root . '/modules'];

    spl_autoload_register(static function (string $class) use ($classMap, $psr4): void {
        if (isset($classMap[$class])) {
            // Several stand-in classes share a file; Composer's includeFile is a plain include.
            include_once $classMap[$class];

            return;
        }
        foreach ($psr4 as $prefix => $dir) {
            if (str_starts_with($class, $prefix)) {
                $file = $dir . '/' . strtr(substr($class, strlen($prefix)), '\\', '/') . '.php';
                if (file_exists($file)) {
                    include $file;
                }

                return;
            }
        }
    }, true, true);
})();
