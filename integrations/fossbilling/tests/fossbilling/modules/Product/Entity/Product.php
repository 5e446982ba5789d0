<?php

declare(strict_types=1);

namespace Box\Mod\Product\Entity;

/**
 * STAND-IN (test only) for src/modules/Product/Entity/Product.php of FOSSBilling 0.8.5 (a Doctrine
 * entity there; a row of the stand-in's database here): the getters the order flows and service
 * modules use. getConfig() is the product's "Configuration" tab as JSON (product/update_config).
 */
class Product
{
    public function __construct(private array $row)
    {
    }

    public function row(): array
    {
        return $this->row;
    }

    public function getId(): int
    {
        return (int) $this->row['id'];
    }

    public function getTitle(): ?string
    {
        return $this->row['title'] ?? null;
    }

    public function getType(): ?string
    {
        return $this->row['type'] ?? null;
    }

    public function getSetup(): ?string
    {
        return $this->row['setup'] ?? null;
    }

    public function getConfig(): ?string
    {
        return $this->row['config'] ?? null;
    }

    public function setConfig(?string $config): void
    {
        $this->row['config'] = $config;
    }

    public function getPlugin(): ?string
    {
        return $this->row['plugin'] ?? null;
    }

    public function getPluginConfig(): ?string
    {
        return $this->row['plugin_config'] ?? null;
    }

    /** The periods the product's pricing offers (recurrent pricing). */
    public function getPeriods(): array
    {
        return json_decode($this->row['periods'] ?? '[]', true) ?: [];
    }
}
