<?php
/**
 * Reads WHMCS's module parameters ($params) into what the bridge's provisioning API takes.
 *
 * Every key is read with a default: WHMCS documents the keys loosely (developers.whmcs.com,
 * "Module Parameters") and PHP 8 warns on a missing one. Values are cast here because WHMCS
 * passes ids and ports as strings or ints depending on where the call comes from.
 */

namespace LicenseBridgeWhmcs;

// WHMCS's guard (the namespace line has to come first in PHP).
if (!defined('WHMCS')) {
    die('This file cannot be accessed directly');
}

final class Params
{
    /** The module's settings (ConfigOptions), in declaration order: position => friendly name. */
    public const OPTION_TIMEOUT = 1;
    public const OPTION_NO_EMAIL = 2;
    public const OPTION_ADDON_PRODUCT = 3;
    public const OPTION_NAMES = [
        self::OPTION_TIMEOUT => 'Request timeout',
        self::OPTION_NO_EMAIL => 'Do not send the client e-mail',
        self::OPTION_ADDON_PRODUCT => 'Bridge product id (product addons)',
    ];

    /** The custom field that holds the licence IP when the service has no dedicated IP. */
    public const IP_FIELD = 'IP Address';

    public function __construct(private readonly array $params)
    {
    }

    public function raw(string $key): mixed
    {
        return $this->params[$key] ?? null;
    }

    private function str(string $key): string
    {
        $v = $this->params[$key] ?? '';
        return is_scalar($v) ? trim((string) $v) : '';
    }

    // ---- the server (the bridge) ---------------------------------------------------------------

    /** The bridge's base URL from the server record: Secure/HTTP prefix, hostname (else IP), port. */
    public function baseUrl(): string
    {
        $host = $this->str('serverhostname');
        if ($host === '') {
            $host = $this->str('serverip');
        }
        if ($host === '') {
            return '';
        }
        $scheme = strtolower($this->str('serverhttpprefix'));
        if ($scheme !== 'http' && $scheme !== 'https') {
            $scheme = self::truthy($this->params['serversecure'] ?? null) ? 'https' : 'http';
        }
        $port = $this->str('serverport');
        // An admin who typed a URL into Hostname: take its parts rather than build "https://https://...".
        if (str_contains($host, '://')) {
            $parts = parse_url($host) ?: [];
            $scheme = ($parts['scheme'] ?? $scheme) === 'http' ? 'http' : 'https';
            $port = isset($parts['port']) ? (string) $parts['port'] : $port;
            $host = (string) ($parts['host'] ?? '');
        }
        $host = trim(rtrim($host, '/'), '[]');
        return $host === '' ? '' : \LicenseBridgeClient::baseUrl($scheme, $host, $port);
    }

    /** PROVISIONING_TOKEN: the server's Access Hash, else its Password. */
    public function token(): string
    {
        $hash = $this->str('serveraccesshash');
        return $hash !== '' ? $hash : $this->str('serverpassword');
    }

    /** Every secret of the server record, for WHMCS's log masking (replaceVars). */
    public function secrets(): array
    {
        $out = [];
        foreach (['serveraccesshash', 'serverpassword'] as $key) {
            foreach ([$this->params[$key] ?? '', $this->str($key)] as $v) {
                if (is_string($v) && $v !== '' && !in_array($v, $out, true)) {
                    $out[] = $v;
                }
            }
        }
        return $out;
    }

    // ---- the module settings -------------------------------------------------------------------

    /**
     * A ConfigOptions value: `configoptionN`, else the friendly name (seen for product addons in
     * public modules; whether addons get `configoptionN` too is not documented).
     */
    public function option(int $n): string
    {
        foreach (['configoption' . $n, self::OPTION_NAMES[$n] ?? ''] as $key) {
            $v = $key !== '' ? ($this->params[$key] ?? null) : null;
            if (is_scalar($v) && trim((string) $v) !== '') {
                return trim((string) $v);
            }
        }
        return '';
    }

    /** Seconds for calls that change something: the setting, 5-120, default 25 (above the bridge's 20 s wait). */
    public function timeout(): int
    {
        $v = $this->option(self::OPTION_TIMEOUT);
        $n = preg_match('/^[0-9]+$/D', $v) === 1 ? (int) $v : 25;
        return max(5, min(120, $n));
    }

    /** Seconds for reads that a page waits on (admin tab, client area, test connection). */
    public function readTimeout(): int
    {
        return min(10, $this->timeout());
    }

    public function sendEmail(): bool
    {
        return !self::truthy($this->option(self::OPTION_NO_EMAIL));
    }

    // ---- the service ---------------------------------------------------------------------------

    /** WHMCS 7.2+ calls the module for a product addon with a non-zero `addonId`. */
    public function isAddon(): bool
    {
        return !empty($this->params['addonId']);
    }

    public function addonId(): int
    {
        return (int) ($this->params['addonId'] ?? 0);
    }

    /** The bridge's service_identifier: the service id, or "addon-<hosting addon id>" for a product addon. */
    public function serviceIdentifier(): string
    {
        if ($this->isAddon()) {
            return 'addon-' . $this->addonId();
        }
        $id = (int) ($this->params['serviceid'] ?? 0);
        return $id > 0 ? (string) $id : '';
    }

    /**
     * The bridge's package_identifier (a key of its config/products.json): the product id; for a
     * product addon the "Bridge product id" setting, else "addon-<addon definition id>".
     */
    public function packageIdentifier(): string
    {
        if (!$this->isAddon()) {
            $pid = (int) ($this->params['pid'] ?? 0);
            return $pid > 0 ? (string) $pid : '';
        }
        $set = $this->option(self::OPTION_ADDON_PRODUCT);
        if ($set !== '') {
            return $set;
        }
        $definition = (int) ($this->modelValue('addonid') ?? 0);
        return $definition > 0 ? 'addon-' . $definition : '';
    }

    /** The licence IP: the Dedicated IP, else the custom field "IP Address". */
    public function ip(): string
    {
        $dedicated = $this->str('dedicatedip');
        return $dedicated !== '' ? $dedicated : $this->customField(self::IP_FIELD);
    }

    /** Where the licence IP lives in WHMCS, as a service property name (Service Properties, WHMCS 7.2+). */
    public function ipProperty(): string
    {
        if ($this->str('dedicatedip') !== '') {
            return 'Dedicated IP';
        }
        if ($this->customField(self::IP_FIELD) !== '' || $this->isAddon()) {
            return self::IP_FIELD;
        }
        return 'Dedicated IP';
    }

    public function customField(string $name): string
    {
        $fields = $this->params['customfields'] ?? [];
        $v = is_array($fields) ? ($fields[$name] ?? '') : '';
        return is_scalar($v) ? trim((string) $v) : '';
    }

    public function customerEmail(): string
    {
        $v = ($this->params['clientsdetails'] ?? [])['email'] ?? '';
        return is_scalar($v) ? trim((string) $v) : '';
    }

    /** The client's name as WHMCS has it; the shared client cleans it for the bridge (LicenseBridgeRules). */
    public function customerName(): string
    {
        $c = $this->params['clientsdetails'] ?? [];
        $c = is_array($c) ? $c : [];
        $name = is_scalar($c['fullname'] ?? null) ? trim((string) $c['fullname']) : '';
        if ($name === '') {
            $first = is_scalar($c['firstname'] ?? null) ? trim((string) $c['firstname']) : '';
            $last = is_scalar($c['lastname'] ?? null) ? trim((string) $c['lastname']) : '';
            $name = trim($first . ' ' . $last);
        }
        return $name;
    }

    /**
     * The bridge's billing cycle from the model's `billingcycle` (WHMCS's words, "Semi-Annually"
     * and so on, mapped by LicenseBridgeRules::cycle); null when WHMCS gives none (the bridge then
     * assumes monthly). Throws for a cycle with no licence term ("One Time", "Free Account").
     */
    public function billingCycle(): ?string
    {
        $cycle = $this->modelValue('billingcycle') ?? ($this->params['billingcycle'] ?? null);
        $word = \LicenseBridgeRules::cycle($cycle);
        if ($word === false) {
            throw new ModuleError('the billing cycle "' . \LicenseBridgeRules::clip(\LicenseBridgeRules::printable(is_scalar($cycle) ? (string) $cycle : ''), 40)
                . '" has no licence term; licences are bought for 1, 3, 6, 12, 24 or 36 months, so give the service a Monthly ... Triennially cycle');
        }
        return $word;
    }

    /**
     * The service's next due date as YYYY-MM-DD, only when it lies after today: WHMCS does not say
     * whether Renew runs before or after it moves the date on, and an old date would pull the
     * bridge's paid-until back. Without it the bridge adds one billing cycle.
     */
    public function nextDueDate(?\DateTimeInterface $today = null): ?string
    {
        $v = $this->modelValue('nextduedate');
        $date = $v instanceof \DateTimeInterface ? $v->format('Y-m-d') : \LicenseBridgeRules::date($v);
        if ($date === null) {
            return null;
        }
        $today = ($today ?? new \DateTimeImmutable('now', new \DateTimeZone('UTC')))->format('Y-m-d');
        return $date > $today && checkdate((int) substr($date, 5, 2), (int) substr($date, 8, 2), (int) substr($date, 0, 4))
            ? $date
            : null;
    }

    /** The `model` (a WHMCS\Service\Service or WHMCS\Service\Addon, Eloquent) or null. */
    public function model(): ?object
    {
        $m = $this->params['model'] ?? null;
        return is_object($m) ? $m : null;
    }

    /** An attribute of the model (Eloquent attributes are read through __get). */
    public function modelValue(string $attribute): mixed
    {
        $m = $this->model();
        if ($m === null) {
            return null;
        }
        try {
            return $m->{$attribute} ?? null;
        } catch (\Throwable $e) {
            return null;
        }
    }

    private static function truthy(mixed $v): bool
    {
        if (is_bool($v)) {
            return $v;
        }
        return in_array(strtolower(trim((string) $v)), ['1', 'on', 'yes', 'true'], true);
    }
}

/** A problem the module found before calling the bridge; its message is shown to the admin. */
final class ModuleError extends \RuntimeException
{
}
