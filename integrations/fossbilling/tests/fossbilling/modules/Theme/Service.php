<?php

declare(strict_types=1);

namespace Box\Mod\Theme;

/**
 * STAND-IN (test only) for the template lookup of src/modules/Theme/Service.php, FOSSBilling 0.8.5
 * (getThemeConfig / buildThemeConfig, L390-450): Twig looks for a template in the theme's html/
 * folder, then its parent theme's (manifest "extends"), then templates/client (client area) or
 * templates/admin (admin area) of every core and ACTIVATED module, in that order. The client's
 * order page includes "mod_service<type>_manage.html.twig" from there
 * (Order/templates/client/mod_order_manage.html.twig L16, L128-130); the admin's order page and
 * product page likewise (mod_service<type>_manage / _config).
 */
class Service implements \FOSSBilling\InjectionAwareInterface
{
    protected ?\Pimple\Container $di = null;

    public function setDi(\Pimple\Container $di): void
    {
        $this->di = $di;
    }

    public function templatePaths(bool $client, string $theme): array
    {
        $paths = [PATH_THEMES . '/' . $theme . '/html'];
        $manifest = json_decode((string) @file_get_contents(PATH_THEMES . '/' . $theme . '/manifest.json'), true);
        if (is_array($manifest) && isset($manifest['extends'])) {
            $paths[] = PATH_THEMES . '/' . str_replace('.', '', trim((string) $manifest['extends'], '/')) . '/html';
        }
        foreach (array_unique($this->di['mod_service']('extension')->getCoreAndActiveModules()) as $mod) {
            $p = PATH_MODS . '/' . ucfirst((string) $mod) . '/' . ($client ? 'templates/client' : 'templates/admin');
            if (is_dir($p)) {
                $paths[] = $p;
            }
        }

        return $paths;
    }

    /** The file Twig would load for $name, or null. */
    public function findTemplate(bool $client, string $theme, string $name): ?string
    {
        foreach ($this->templatePaths($client, $theme) as $dir) {
            if (is_file($dir . '/' . $name)) {
                return $dir . '/' . $name;
            }
        }

        return null;
    }
}
