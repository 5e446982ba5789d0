<?php

declare(strict_types=1);

namespace Box\Mod\Extension;

/**
 * STAND-IN (test only) for src/modules/Extension/Service.php of FOSSBilling 0.8.5 (commit 544bf2b8):
 * the Extensions page and extension settings, reduced to modules ("mod").
 *  - getExtensionsList / _getAvailable (L136-273): a folder of modules/ whose name is letters and
 *    digits only and that has a manifest.json is listed as available (status null) until it is
 *    activated; an activated one is listed with status "installed";
 *  - activateExistingExtension / activate / installModule (L389-640): refuses core modules and a
 *    FOSSBilling older than the manifest's minimum_fossbilling_version, runs the module's
 *    install() (FOSSBilling\Module::install), records the extension as installed with the
 *    manifest's version;
 *  - isExtensionActive (L89): core modules always, others once installed;
 *  - getInstalledMods / getCoreAndActiveModules (L579, L771);
 *  - setConfig (L674-712): the whole configuration, JSON, encrypted with the instance's salt, in
 *    extension_meta (extension "mod_<name>", meta_key "config"); getConfig's cache is left out.
 * VERSION is the FOSSBilling version the stand-in plays.
 */
class Service implements \FOSSBilling\InjectionAwareInterface
{
    public const VERSION = '0.8.5';

    protected ?\Pimple\Container $di = null;

    public function setDi(\Pimple\Container $di): void
    {
        $this->di = $di;
    }

    public function isCoreModule(string $mod): bool
    {
        return in_array(strtolower($mod), $this->di['mod']('extension')->getCoreModules(), true);
    }

    public function isExtensionActive(string $type, string $id): bool
    {
        if ($type === 'mod' && $this->isCoreModule($id)) {
            return true;
        }

        return $this->di['db']->findOne('extension', 'type = :type AND name = :name AND status = :status', [':type' => $type, ':name' => strtolower($id), ':status' => 'installed']) !== null;
    }

    public function getInstalledMods(): array
    {
        return array_map(static fn ($e) => $e->name, $this->di['db']->find('extension', 'type = :type AND status = :status', [':type' => 'mod', ':status' => 'installed']));
    }

    public function getCoreAndActiveModules(): array
    {
        $modules = array_merge($this->di['mod']('extension')->getCoreModules(), $this->getInstalledMods());
        sort($modules);

        return $modules;
    }

    public function getExtensionsList(array $filter = []): array
    {
        $installed = $this->getInstalledMods();
        $result = [];
        foreach (scandir(PATH_MODS) as $dir) {
            if (!is_dir(PATH_MODS . '/' . $dir) || preg_match('/\A[a-zA-Z0-9]+\z/', $dir) !== 1) {
                continue;
            }
            $mod = $this->di['mod']($dir);
            if ($mod->isCore() || !$mod->hasManifest()) {
                continue;
            }
            $manifest = $mod->getManifest();
            $manifest['status'] = in_array($mod->getName(), $installed, true) ? 'installed' : null;
            $result[] = $manifest;
        }

        return $result;
    }

    public function activateExistingExtension(array $data): array
    {
        if (($data['type'] ?? null) !== 'mod') {
            throw new \FOSSBilling\InformationException('The stand-in imitates modules only');
        }
        $mod = $this->di['mod']($data['id']);
        if ($mod->isCore()) {
            throw new \FOSSBilling\InformationException('FOSSBilling core modules cannot be installed or removed');
        }
        $info = $mod->getManifest();
        if (isset($info['minimum_fossbilling_version']) && version_compare(strtolower($info['minimum_fossbilling_version']), self::VERSION) > 0) {
            throw new \FOSSBilling\InformationException('Module cannot be installed. It requires at least :min version of FOSSBilling. You are using :v', [':min' => $info['minimum_fossbilling_version'], ':v' => self::VERSION]);
        }
        $mod->install();

        $ext = $this->di['db']->findOne('extension', 'type = :type AND name = :name', [':type' => 'mod', ':name' => $mod->getName()])
            ?? $this->di['db']->dispense('extension');
        $ext->type = 'mod';
        $ext->name = $mod->getName();
        $ext->status = 'installed';
        $ext->version = $info['version'] !== null ? (string) $info['version'] : null;
        $this->di['db']->store($ext);

        return ['id' => $mod->getName(), 'type' => 'mod', 'redirect' => false, 'has_settings' => file_exists(PATH_MODS . '/' . ucfirst($mod->getName()) . '/templates/admin/mod_' . $mod->getName() . '_settings.html.twig')];
    }

    public function hasManagePermission(string $module): void
    {
        // The stand-in's admin is a super administrator (Staff\Service::hasPermission: always true).
    }

    public function setConfig($data): bool
    {
        $this->hasManagePermission($data['ext']);
        $meta = $this->di['db']->findOne('extension_meta', 'extension = :ext AND meta_key = :key', [':ext' => $data['ext'], ':key' => 'config'])
            ?? $this->di['db']->dispense('extension_meta');
        $meta->extension = $data['ext'];
        $meta->meta_key = 'config';
        $meta->meta_value = $this->di['crypt']->encrypt(json_encode($data), 'instance-salt');
        $this->di['db']->store($meta);

        return true;
    }
}
