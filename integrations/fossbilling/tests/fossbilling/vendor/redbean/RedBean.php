<?php

declare(strict_types=1);

/**
 * STAND-IN for the parts of RedBeanPHP that FOSSBilling 0.8.5's Box_Database hands to modules
 * (test only): a bean is a row whose columns are read and written as properties (a missing one
 * reads as null); box() gives the FUSE model (Model_<Type>, Box_BeanHelper::getModelForBean) when
 * such a class exists; a model forwards property access to its bean. Values read back from the
 * database are strings (or null), as PDO returns them.
 */

namespace RedBeanPHP {
    class OODBBean
    {
        private array $props = [];

        public function __construct(private readonly string $type, array $row = [])
        {
            $this->props = $row;
        }

        public function __get(string $name): mixed
        {
            return $this->props[$name] ?? null;
        }

        public function __set(string $name, mixed $value): void
        {
            $this->props[$name] = $value;
        }

        public function __isset(string $name): bool
        {
            return isset($this->props[$name]);
        }

        public function __unset(string $name): void
        {
            unset($this->props[$name]);
        }

        public function getMeta(string $key): mixed
        {
            return $key === 'type' ? $this->type : null;
        }

        public function export(): array
        {
            return $this->props;
        }

        public function box(): object
        {
            $class = '\\Model_' . preg_replace_callback('/_([a-z])/', static fn ($m) => strtoupper($m[1]), ucfirst($this->type));
            if (!class_exists($class)) {
                return $this;
            }
            $model = new $class();
            $model->loadBean($this);

            return $model;
        }
    }

    class SimpleModel
    {
        protected ?OODBBean $bean = null;

        public function loadBean(OODBBean $bean): void
        {
            $this->bean = $bean;
        }

        public function unbox(): OODBBean
        {
            return $this->bean;
        }

        public function __get(string $name): mixed
        {
            return $this->bean->$name;
        }

        public function __set(string $name, mixed $value): void
        {
            $this->bean->$name = $value;
        }

        public function __isset(string $name): bool
        {
            return isset($this->bean->$name);
        }
    }

    class RedException extends \Exception
    {
    }
}

namespace RedBeanPHP\RedException {
    /** What a frozen RedBean throws for a query on a missing table or column (PDO's SQLSTATE error). */
    class SQL extends \RedBeanPHP\RedException
    {
    }
}
