<?php

declare(strict_types=1);

/**
 * STAND-IN (test only) for src/di.php of FOSSBilling 0.8.5 (commit 544bf2b8): the services of the
 * container that modules use.
 *  - db (L123-157): Box_Database over a frozen RedBean;
 *  - crypt (L73): Box_Crypt;
 *  - mod (L204-210): a FOSSBilling\Module with the container;
 *  - mod_service (L217): $di['mod']($mod)->getService($sub);
 *  - mod_config (L225): $di['mod']($name)->getConfig();
 *  - period (L646): new Box_Period($code);
 *  - api_dispatcher (L489): FOSSBilling\Api\Dispatcher.
 */

$di = new Pimple\Container();

$di['db'] = static function (): Box_Database {
    Box_Database::open(PATH_ROOT . '/state.json');

    return new Box_Database();
};
$di['crypt'] = static fn (): Box_Crypt => new Box_Crypt();
$di['mod'] = $di->protect(static function ($name) use ($di) {
    $mod = new FOSSBilling\Module($name);
    $mod->setDi($di);

    return $mod;
});
$di['mod_service'] = $di->protect(static fn ($mod, $sub = '') => $di['mod']($mod)->getService($sub));
$di['mod_config'] = $di->protect(static fn ($name) => $di['mod']($name)->getConfig());
$di['period'] = $di->protect(static fn ($code): Box_Period => new Box_Period($code));
$di['api_dispatcher'] = static fn (): FOSSBilling\Api\Dispatcher => new FOSSBilling\Api\Dispatcher($di);

return $di;
