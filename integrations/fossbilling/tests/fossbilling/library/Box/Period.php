<?php

declare(strict_types=1);

/**
 * STAND-IN (test only) for src/library/Box/Period.php (FOSSBilling 0.8.5, $di['period']): a billing
 * period code "<qty><D|W|M|Y>" (2 characters, quantity within the unit's range), its unit and
 * quantity, and getExpirationTime() = strtotime("+<qty> <days|weeks|months|years>", $now).
 */
class Box_Period
{
    private const UNITS = ['D' => [1, 90, 'days'], 'W' => [1, 52, 'weeks'], 'M' => [1, 24, 'months'], 'Y' => [1, 5, 'years']];

    private readonly string $unit;
    private readonly int $qty;

    public function __construct(string $code)
    {
        if (strlen($code) != 2) {
            throw new FOSSBilling\Exception('Invalid period code. Period definition must be 2 chars length');
        }
        [$qty, $unit] = str_split($code);
        $qty = (int) $qty;
        $unit = strtoupper($unit);
        if (!array_key_exists($unit, self::UNITS)) {
            throw new FOSSBilling\Exception('Period Error. Unit :unit is not defined', [':unit' => $unit]);
        }
        if ($qty < self::UNITS[$unit][0] || $qty > self::UNITS[$unit][1]) {
            throw new FOSSBilling\Exception('Invalid period quantity :qty for unit :unit', [':qty' => $qty, ':unit' => $unit]);
        }
        $this->unit = $unit;
        $this->qty = $qty;
    }

    public function getUnit(): string
    {
        return $this->unit;
    }

    public function getQty(): int
    {
        return $this->qty;
    }

    public function getCode(): string
    {
        return $this->qty . $this->unit;
    }

    public function getExpirationTime(?int $now = null): int|false
    {
        return strtotime('+' . $this->qty . ' ' . self::UNITS[$this->unit][2], $now ?? time());
    }
}
