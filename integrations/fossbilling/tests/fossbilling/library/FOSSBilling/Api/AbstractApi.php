<?php

declare(strict_types=1);

namespace FOSSBilling\Api;

/**
 * STAND-IN (test only) for src/library/FOSSBilling/Api/AbstractApi.php (FOSSBilling 0.8.5): the
 * base of every module's Api\Admin / Api\Client; the Dispatcher sets the DI container, the module,
 * the caller's identity and the module's service on it. checkPermissions() asks the Staff module;
 * the stand-in's admin is a super administrator, who has every permission (Staff\Service::hasPermission).
 */
class AbstractApi implements \FOSSBilling\InjectionAwareInterface
{
    protected $ip;
    protected $mod;
    protected $service;
    protected $identity;
    protected ?\Pimple\Container $di = null;

    public function setDi(\Pimple\Container $di): void
    {
        $this->di = $di;
    }

    public function getDi(): ?\Pimple\Container
    {
        return $this->di;
    }

    public function setMod($mod): void
    {
        $this->mod = $mod;
    }

    public function getMod()
    {
        return $this->mod;
    }

    public function setIdentity($identity): void
    {
        $this->identity = $identity;
    }

    public function getIdentity()
    {
        return $this->identity;
    }

    public function setService($service): void
    {
        $this->service = $service;
    }

    public function getService()
    {
        return $this->service;
    }

    public function setIp($ip): void
    {
        $this->ip = $ip;
    }

    public function getIp()
    {
        return $this->ip;
    }

    protected function checkPermissions(string $module, ?string $key = null, mixed $constraint = null): void
    {
        if (!$this->identity instanceof \Model_Admin) {
            throw new \FOSSBilling\InformationException('You need the ":permission" permission to perform this action', [':permission' => $module], 403);
        }
    }
}
