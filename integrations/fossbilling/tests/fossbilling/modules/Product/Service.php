<?php

declare(strict_types=1);

namespace Box\Mod\Product;

use Box\Mod\Product\Entity\Product;

/**
 * STAND-IN (test only) for src/modules/Product/Service.php of FOSSBilling 0.8.5 (commit 544bf2b8):
 *  - getTypes (L264-283): the five built-in types, then one per ACTIVATED extension module whose
 *    name starts with "service" ("servicelicensebridge" -> type "licensebridge", label "Licensebridge");
 *  - findProductById (L1816): the product, or "Product not found";
 *  - getProductModuleService (L1825): $di['mod_service']('service' . type);
 *  - prepareCartProductConfig (L321-338): the type's service's attachOrderConfig($product, $config),
 *    then validateOrderData($config), then validateCustomForm, when it has them;
 *  - updateConfig (L515-545): the product/update_config form: keys kept only when sent again, a
 *    blank value removes its key.
 */
class Service implements \FOSSBilling\InjectionAwareInterface
{
    final public const CUSTOM = 'custom';
    final public const LICENSE = 'license';
    final public const DOMAIN = 'domain';
    final public const DOWNLOADABLE = 'downloadable';
    final public const HOSTING = 'hosting';
    final public const SETUP_AFTER_ORDER = 'after_order';
    final public const SETUP_AFTER_PAYMENT = 'after_payment';
    final public const SETUP_MANUAL = 'manual';

    protected ?\Pimple\Container $di = null;

    public function setDi(\Pimple\Container $di): void
    {
        $this->di = $di;
    }

    public function getTypes(): array
    {
        $data = [self::CUSTOM => 'Custom', self::LICENSE => 'License', self::DOWNLOADABLE => 'Downloadable', self::HOSTING => 'Hosting', self::DOMAIN => 'Domain'];
        foreach ($this->di['mod_service']('extension')->getInstalledMods() as $mod) {
            if (str_starts_with((string) $mod, 'service')) {
                $n = substr((string) $mod, strlen('service'));
                $data[$n] = ucfirst($n);
            }
        }

        return $data;
    }

    public function findProductById(int $id): Product
    {
        $this->di['db']; // opens the stand-in's database
        $row = \Box_Database::state()['rows']['product'][(string) $id] ?? null;
        if ($row === null) {
            throw new \FOSSBilling\InformationException('Product not found');
        }

        return new Product($row);
    }

    public function getProductModuleService(Product $product): object
    {
        $type = $product->getType();
        if ($type === null || $type === '') {
            throw new \FOSSBilling\Exception('Product type could not be determined.');
        }

        return $this->di['mod_service']('service' . $type);
    }

    public function prepareCartProductConfig(Product $product, array $config): array
    {
        $service = $this->getProductModuleService($product);
        if (method_exists($service, 'attachOrderConfig')) {
            $config = $service->attachOrderConfig($product, $config);
        }
        if (method_exists($service, 'validateOrderData')) {
            $service->validateOrderData($config);
        }

        return $config;
    }

    public function updateConfig(Product $model, $data): bool
    {
        $config = json_decode($model->getConfig() ?? '', true) ?? [];
        if (isset($data['config']) && is_array($data['config'])) {
            $config = array_intersect_key((array) $config, $data['config']);
            foreach ($data['config'] as $key => $val) {
                $config[$key] = $val;
                if (isset($config[$key]) && empty($val) && !is_numeric($val)) {
                    unset($config[$key]);
                }
            }
        }
        $model->setConfig(json_encode($config));
        $state = &\Box_Database::state();
        $state['rows']['product'][(string) $model->getId()] = $model->row();

        return true;
    }
}
