<?php

declare(strict_types=1);

namespace FOSSBilling;

/** STAND-IN (test only) for src/library/FOSSBilling/InjectionAwareInterface.php (FOSSBilling 0.8.5). */
interface InjectionAwareInterface
{
    public function setDi(\Pimple\Container $di): void;
}
