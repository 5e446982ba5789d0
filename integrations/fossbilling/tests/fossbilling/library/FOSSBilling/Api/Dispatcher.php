<?php

declare(strict_types=1);

namespace FOSSBilling\Api;

use FOSSBilling\Exception;
use FOSSBilling\InformationException;
use FOSSBilling\Validation\Api\RequiredParams;

/**
 * STAND-IN (test only) for src/library/FOSSBilling/Api/Dispatcher.php, FOSSBilling 0.8.5
 * (dispatchWithArguments, validateRequiredParams): an API call "<module>_<method>" by a role
 *  - needs an underscore (710);
 *  - is refused unless the module is active: a core module, or an extension activated on the
 *    Extensions page (715);
 *  - goes to the class \Box\Mod\<Ucfirst module>\Api\<Ucfirst role>, which the autoloader must find
 *    (740), an AbstractApi (730), given the DI container, the module, the identity and the
 *    module's service;
 *  - to a method of that class (or its __call) (740), after the method's #[RequiredParams] are
 *    checked: each must be set and not blank (an InformationException with the declared message).
 * The staff permission check for admins is left out: the stand-in's admin is a super administrator.
 */
final class Dispatcher
{
    public function __construct(private readonly \Pimple\Container $di)
    {
    }

    public function dispatch(string $role, object $identity, string $method, array $data = []): mixed
    {
        if (!str_contains($method, '_')) {
            throw new Exception('Method :method must contain underscore', [':method' => $method], 710);
        }
        $parts = explode('_', $method);
        $mod = strtolower($parts[0]);
        unset($parts[0]);
        $methodName = implode('_', $parts);

        $extensionService = $this->di['mod']('extension')->getService();
        if (!$extensionService->isExtensionActive('mod', $mod)) {
            throw new Exception('FOSSBilling module :mod is not installed/activated', [':mod' => $mod], 715);
        }

        $apiClass = '\Box\Mod\\' . ucfirst($mod) . '\Api\\' . ucfirst($role);
        if (!class_exists($apiClass)) {
            throw new Exception(':type API call :method does not exist in module :module', [':type' => ucfirst($role), ':method' => $methodName, ':module' => $mod], 740);
        }
        $api = new $apiClass();
        if (!$api instanceof AbstractApi) {
            throw new Exception('Api class must be an instance of FOSSBilling\Api\AbstractApi', null, 730);
        }
        $module = $this->di['mod']($mod);
        $api->setDi($this->di);
        $api->setMod($module);
        $api->setIdentity($identity);
        $api->setIp('127.0.0.1');
        if ($module->hasService()) {
            $api->setService($this->di['mod_service']($mod));
        }

        if (!method_exists($api, $methodName) || !is_callable([$api, $methodName])) {
            if (!(new \ReflectionClass($api))->hasMethod('__call')) {
                throw new Exception(':type API call :method does not exist in module :module', [':type' => ucfirst($role), ':method' => $methodName, ':module' => $mod], 740);
            }
        } else {
            foreach ((new \ReflectionMethod($api, $methodName))->getAttributes(RequiredParams::class) as $attribute) {
                foreach ($attribute->newInstance()->params as $name => $message) {
                    $value = $data[$name] ?? null;
                    if (!isset($data[$name]) || (is_string($value) && trim($value) === '') || (!is_numeric($value) && empty($value))) {
                        throw new InformationException($message);
                    }
                }
            }
        }

        return $api->{$methodName}($data);
    }
}
