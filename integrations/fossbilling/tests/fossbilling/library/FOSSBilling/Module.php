<?php

declare(strict_types=1);

namespace FOSSBilling;

/**
 * STAND-IN (test only) for src/library/FOSSBilling/Module.php, FOSSBilling 0.8.5 (commit 544bf2b8),
 * reduced to what the order flows and the Extensions page use:
 *  - a module's name is lower-cased; its folder is PATH_MODS/ucfirst(name) (getModulePath);
 *  - getService(): the file <folder>/Service.php must exist, then the class
 *    Box\Mod\<Ucfirst name>\Service is instantiated (the autoloader finds it) and given the DI
 *    container when it has setDi();
 *  - getManifest(): <folder>/manifest.json, defaults merged, id forced to the name, type "mod";
 *  - install(): nothing for a core module; else the service's install() when it has one;
 *  - getConfig(): the extension_meta row (extension "mod_<name>", meta_key "config"), decrypted
 *    with the instance's salt; [] when there is none;
 *  - CORE_MODULES: the same list as 0.8.5's.
 */
class Module
{
    private ?\Pimple\Container $di = null;
    private readonly string $module;

    public const CORE_MODULES = ['api', 'activity', 'antispam', 'cart', 'client',
        'cron', 'currency', 'email', 'extension',
        'hook', 'index', 'invoice', 'order',
        'page', 'product', 'profile', 'security',
        'servicecustom', 'servicedomain', 'servicedownloadable',
        'servicehosting', 'servicelicense', 'staff', 'stats',
        'support', 'system', 'theme', 'orderbutton', 'formbuilder',
        'widgets'];

    public function __construct(string $mod)
    {
        if (!preg_match('#[a-zA-Z]#', $mod)) {
            throw new Exception('Invalid module name (:mod).', ['mod' => $mod]);
        }
        $this->module = strtolower($mod);
    }

    public function setDi(\Pimple\Container $di): void
    {
        $this->di = $di;
    }

    public function hasManifest(): bool
    {
        return file_exists($this->getModulePath() . 'manifest.json');
    }

    public function getManifest(): array
    {
        if (!$this->hasManifest()) {
            throw new Exception('Missing manifest file for the :mod module.', [':mod' => $this->module], 5897);
        }
        try {
            $json = json_decode((string) file_get_contents($this->getModulePath() . 'manifest.json'), true, 512, JSON_THROW_ON_ERROR);
        } catch (\JsonException) {
            throw new Exception('Invalid manifest file for the :mod module. Please check file syntax and permissions.', [':mod' => $this->module]);
        }
        $info = array_merge(['id' => $this->module, 'type' => 'mod', 'name' => $this->module, 'version' => '1.0', 'minimum_fossbilling_version' => null], $json);
        $info['id'] = $this->module;
        $info['type'] = 'mod';

        return $info;
    }

    public function hasService(string $sub = ''): bool
    {
        return file_exists($this->getModulePath() . 'Service' . ucfirst($sub) . '.php');
    }

    public function getService(string $sub = ''): object
    {
        if (!$this->hasService($sub)) {
            throw new Exception('Module :mod does not have a service class. Make sure Service.php exists and is valid.', [':mod' => $this->module], 5898);
        }
        $class = 'Box\\Mod\\' . ucfirst($this->module) . '\\Service' . ucfirst($sub);
        $service = new $class();
        if (method_exists($service, 'setDi')) {
            $service->setDi($this->di);
        }

        return $service;
    }

    public function install(): bool
    {
        if ($this->isCore()) {
            return true;
        }
        if ($this->hasService()) {
            $s = $this->getService();
            if (method_exists($s, 'install')) {
                $s->install();

                return true;
            }
        }

        return false;
    }

    public function getCoreModules(): array
    {
        return self::CORE_MODULES;
    }

    public function isCore(): bool
    {
        return in_array($this->module, self::CORE_MODULES);
    }

    public function getConfig(): array
    {
        $bean = $this->di['db']->findOne('extension_meta', 'extension = :ext AND meta_key = :key', [':ext' => "mod_{$this->module}", ':key' => 'config']);
        if (!$bean || empty($bean->meta_value)) {
            return [];
        }
        $decrypted = $this->di['crypt']->decrypt($bean->meta_value, 'instance-salt');
        $config = is_string($decrypted) ? json_decode($decrypted, true) : null;

        return is_array($config) ? $config : [];
    }

    public function getName(): string
    {
        return $this->module;
    }

    private function getModulePath(): string
    {
        return PATH_MODS . DIRECTORY_SEPARATOR . ucfirst($this->module) . DIRECTORY_SEPARATOR;
    }
}
