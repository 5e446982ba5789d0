<?php

declare(strict_types=1);

namespace Pimple;

/**
 * STAND-IN for pimple/pimple's Container (test only), FOSSBilling's dependency container
 * (src/di.php): a service defined as a closure is built on first use and then shared; a closure
 * wrapped in protect() is returned as it is (a function, e.g. $di['mod_service']).
 */
class Container implements \ArrayAccess
{
    private array $values = [];
    private array $built = [];
    private \SplObjectStorage $protected;

    public function __construct()
    {
        $this->protected = new \SplObjectStorage();
    }

    public function protect(callable $callable): callable
    {
        $this->protected->attach($callable);

        return $callable;
    }

    public function offsetExists(mixed $id): bool
    {
        return array_key_exists($id, $this->values);
    }

    public function offsetGet(mixed $id): mixed
    {
        if (!array_key_exists($id, $this->values)) {
            throw new \InvalidArgumentException(sprintf('Identifier "%s" is not defined.', $id));
        }
        $value = $this->values[$id];
        if (!$value instanceof \Closure || $this->protected->contains($value)) {
            return $value;
        }
        if (!array_key_exists($id, $this->built)) {
            $this->built[$id] = $value($this);
        }

        return $this->built[$id];
    }

    public function offsetSet(mixed $id, mixed $value): void
    {
        $this->values[$id] = $value;
        unset($this->built[$id]);
    }

    public function offsetUnset(mixed $id): void
    {
        unset($this->values[$id], $this->built[$id]);
    }
}
