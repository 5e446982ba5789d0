<?php

declare(strict_types=1);

namespace FOSSBilling\Validation\Api;

/**
 * STAND-IN (test only) for src/library/FOSSBilling/Validation/Api/RequiredParams.php (FOSSBilling
 * 0.8.5): the attribute an API method declares its required parameters with; the Dispatcher checks it.
 */
#[\Attribute(\Attribute::TARGET_METHOD)]
final readonly class RequiredParams
{
    public function __construct(public array $params)
    {
    }
}
