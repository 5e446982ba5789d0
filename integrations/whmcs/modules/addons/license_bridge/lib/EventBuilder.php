<?php
/**
 * Pure: WHMCS hook data → one license-bridge event (or a reason to send nothing).
 * No I/O here; the caller passes the service facts, the module's last-known state of the
 * service and the settings, and stores the state this returns.
 */

namespace LicenseBridge;

if (!defined('WHMCS')) {
    die('This file cannot be accessed directly');
}

final class EventBuilder
{
    /** WHMCS tblhosting.billingcycle (letters only, lower case) → the bridge's billing_cycle. */
    public const CYCLES = [
        'monthly' => 'monthly',
        'quarterly' => 'quarterly',
        'semiannually' => 'semiannually',
        'annually' => 'annually',
        'biennially' => 'biennially',
        'triennially' => 'triennially',
    ];

    /** Hook action → the bridge's event type. */
    public const TYPES = [
        'create' => 'service.created',
        'suspend' => 'service.suspended',
        'unsuspend' => 'service.unsuspended',
        'terminate' => 'service.terminated',
        'renew' => 'service.renewed',
        'changepackage' => 'service.product_changed',
        'ipchange' => 'service.ip_changed',
    ];

    /** The service status each status action leads to (the state table's `status`). */
    private const STATUS_OF = ['suspend' => 'suspended', 'unsuspend' => 'active', 'terminate' => 'terminated'];

    /** "Semi-Annually" → "semiannually"; null for "One Time", "Free Account" and anything unknown. */
    public static function cycle($whmcsCycle): ?string
    {
        if (!is_string($whmcsCycle)) {
            return null;
        }
        $key = strtolower((string) preg_replace('/[^a-z]/i', '', $whmcsCycle));
        return self::CYCLES[$key] ?? null;
    }

    /** A WHMCS date (string "Y-m-d[ H:i:s]" or DateTimeInterface) as "Y-m-d"; null for 0000-00-00 and junk. */
    public static function date($value): ?string
    {
        if ($value instanceof \DateTimeInterface) {
            return $value->format('Y-m-d');
        }
        if (!is_string($value) || !preg_match('/^(\d{4})-(\d{2})-(\d{2})/', $value, $m)) {
            return null;
        }
        if (!checkdate((int) $m[2], (int) $m[3], (int) $m[1]) || (int) $m[1] < 1970) {
            return null;
        }
        return "{$m[1]}-{$m[2]}-{$m[3]}";
    }

    public static function ip($value): ?string
    {
        $ip = is_string($value) ? trim($value) : '';
        return $ip !== '' && filter_var($ip, FILTER_VALIDATE_IP) !== false ? $ip : null;
    }

    /** One attribute of the `model` (an Eloquent WHMCS\Service\Service, a stdClass or an array); null when absent. */
    public static function attr($model, string $name)
    {
        try {
            if (is_array($model)) {
                return $model[$name] ?? null;
            }
            if (is_object($model)) {
                return isset($model->{$name}) ? $model->{$name} : null;
            }
        } catch (\Throwable $e) {
            // an accessor that throws is the same as no value
        }
        return null;
    }

    private static function str($value): ?string
    {
        if (is_int($value) || is_float($value)) {
            $value = (string) $value;
        }
        if (!is_string($value)) {
            return null;
        }
        $value = trim($value);
        return $value === '' ? null : $value;
    }

    /**
     * The facts about a service that the events need, from the module parameters a WHMCS
     * AfterModule* hook passes as $vars['params'] (falling back to its `model`).
     *
     * @return array{serviceid:?string,pid:?string,billingcycle:?string,nextduedate:?string,ip:?string,status:?string,email:?string,name:?string,addonid:int}
     */
    public static function factsFromParams(array $params): array
    {
        $model = $params['model'] ?? null;
        $client = is_array($params['clientsdetails'] ?? null) ? $params['clientsdetails'] : [];
        $first = self::str($client['firstname'] ?? null);
        $last = self::str($client['lastname'] ?? null);
        $name = trim(($first ?? '') . ' ' . ($last ?? ''));
        return [
            'serviceid' => self::str($params['serviceid'] ?? $params['accountid'] ?? self::attr($model, 'id')),
            'pid' => self::str($params['pid'] ?? $params['packageid'] ?? self::attr($model, 'packageid')),
            'billingcycle' => self::str($params['billingcycle'] ?? self::attr($model, 'billingcycle')),
            'nextduedate' => self::date($params['nextduedate'] ?? self::attr($model, 'nextduedate')),
            'ip' => self::str($params['dedicatedip'] ?? self::attr($model, 'dedicatedip')),
            'status' => self::str($params['status'] ?? self::attr($model, 'domainstatus')),
            'email' => self::str($client['email'] ?? null),
            'name' => $name !== '' ? $name : self::str($client['fullname'] ?? $client['companyname'] ?? null),
            'addonid' => (int) ($params['addonId'] ?? $params['addonid'] ?? 0),
        ];
    }

    /**
     * The same facts from a service lookup row (lb_service_lookup(): tblhosting joined to tblclients).
     */
    public static function factsFromLookup(array $row): array
    {
        $first = self::str($row['firstname'] ?? null);
        $last = self::str($row['lastname'] ?? null);
        $name = trim(($first ?? '') . ' ' . ($last ?? ''));
        return [
            'serviceid' => self::str($row['serviceid'] ?? $row['id'] ?? null),
            'pid' => self::str($row['pid'] ?? $row['packageid'] ?? null),
            'billingcycle' => self::str($row['billingcycle'] ?? null),
            'nextduedate' => self::date($row['nextduedate'] ?? null),
            'ip' => self::str($row['dedicatedip'] ?? null),
            'status' => self::str($row['status'] ?? $row['domainstatus'] ?? null),
            'email' => self::str($row['email'] ?? null),
            'name' => $name !== '' ? $name : self::str($row['companyname'] ?? null),
            'addonid' => 0,
        ];
    }

    /** Fills the gaps of $facts from $fallback; the keys in $prefer are taken from $fallback when it has them. */
    public static function merge(array $facts, ?array $fallback, array $prefer = []): array
    {
        if ($fallback === null) {
            return $facts;
        }
        foreach ($fallback as $k => $v) {
            if ($v === null || $v === '' || $k === 'addonid') {
                continue;
            }
            if (!isset($facts[$k]) || $facts[$k] === '' || in_array($k, $prefer, true)) {
                $facts[$k] = $v;
            }
        }
        return $facts;
    }

    /** Whether the facts lack something $action needs, i.e. a service lookup is worth doing. */
    public static function needsLookup(string $action, array $facts): bool
    {
        if ($action === 'renew' || $action === 'ipchange') {
            return true; // due date and IP as they are now, not as the hook's (possibly older) copy says
        }
        foreach (['pid', 'billingcycle'] as $k) {
            if (empty($facts[$k])) {
                return true;
            }
        }
        return $action === 'create' && (empty($facts['ip']) || empty($facts['email']));
    }

    /** "12, 13 ,x" → ["12","13","x"]; empty means every product. */
    public static function productList($setting): array
    {
        $out = [];
        foreach (preg_split('/[\s,;]+/', (string) $setting) ?: [] as $p) {
            if ($p !== '') {
                $out[] = $p;
            }
        }
        return $out;
    }

    /**
     * Builds the event for one WHMCS action.
     *
     * @param string     $action   create|suspend|unsuspend|terminate|renew|changepackage|ipchange
     * @param array      $facts    factsFromParams()/factsFromLookup(), merged
     * @param array|null $state    the module's last-known state of the service (mod_license_bridge_state), null if none
     * @param string[]   $products product ids to forward; empty = all
     *
     * @return array{event:?array{type:string,webhook_id:string,service_id:string,body:array},reason:?string,quiet:bool,state:?array}
     *   `event` null means send nothing, for `reason` (logged unless `quiet`); `state`, when not null,
     *   is what to store as the service's new state.
     */
    public static function build(string $action, array $facts, ?array $state, array $products = []): array
    {
        if (!isset(self::TYPES[$action])) {
            return self::skip("unknown action \"$action\"");
        }
        $sid = $facts['serviceid'] ?? null;
        if ($sid === null || !preg_match('/^[\w.:-]{1,64}$/', $sid)) {
            return self::skip('no usable service id');
        }
        if (($facts['addonid'] ?? 0) > 0) {
            return self::skip("service $sid: module command of a product addon, not of a service", true);
        }
        $pid = $facts['pid'] ?? null;
        if ($pid === null) {
            return self::skip("service $sid: no product id");
        }
        if ($products && !in_array($pid, $products, true) && $state === null) {
            return self::skip("service $sid: product $pid is not in the module's \"Products to forward\" list", true);
        }
        $rawCycle = $facts['billingcycle'] ?? null;
        $cycle = self::cycle($rawCycle);
        if ($cycle === null) {
            return self::skip("service $sid: billing cycle \"" . ($rawCycle ?? '') . '" is not one the bridge sells (Monthly, Quarterly, Semi-Annually, Annually, Biennially, Triennially); not forwarded');
        }
        if (($action === 'changepackage' || $action === 'ipchange') && $state !== null && ($state['status'] ?? null) === 'terminated') {
            return self::skip("service $sid: terminated, its licence can no longer change", true);
        }
        $type = self::TYPES[$action];
        $service = ['id' => $sid, 'product_id' => $pid, 'billing_cycle' => $cycle];
        $st = $state ?? ['ip' => null, 'pid' => null, 'status' => null, 'status_seq' => 0, 'pid_seq' => 0, 'ip_seq' => 0];

        switch ($action) {
            case 'create':
                $ip = self::ip($facts['ip'] ?? null);
                if ($ip === null) {
                    return self::skip("service $sid: no valid dedicated IP (tblhosting.dedicatedip is \"" . ($facts['ip'] ?? '') . '"); set it and run the module Create again');
                }
                $email = $facts['email'] ?? null;
                if ($email === null || filter_var($email, FILTER_VALIDATE_EMAIL) === false) {
                    return self::skip("service $sid: the client has no valid e-mail address (the install command is mailed there)");
                }
                $service['ip'] = $ip;
                $service['customer'] = ['email' => $email];
                if (!empty($facts['name'])) {
                    $service['customer']['name'] = self::clip($facts['name'], 200);
                }
                // Counters are kept across a re-run of Create, so later ids never repeat.
                $st = array_merge($st, ['ip' => $ip, 'pid' => $pid, 'status' => 'active']);
                return self::event($type, "whmcs-create-$sid", $sid, ['type' => $type, 'service' => $service], $st);

            case 'suspend':
            case 'unsuspend':
            case 'terminate':
                $target = self::STATUS_OF[$action];
                // The same command again (already in that status) is a re-run: same id, the bridge dedups it.
                $seq = ($state !== null && $st['status'] === $target) ? (int) $st['status_seq'] : (int) $st['status_seq'] + 1;
                $st = array_merge($st, ['status' => $target, 'status_seq' => $seq]);
                return self::event($type, self::id($action, $sid, "$target#$seq"), $sid, ['type' => $type, 'service' => $service], $st);

            case 'renew':
                $due = $facts['nextduedate'] ?? null;
                if ($due === null) {
                    return self::skip("service $sid: no next due date to renew to");
                }
                $service['next_due_date'] = $due;
                // Keyed by the due date alone: AfterModuleRenew and InvoicePaid for one payment share this id.
                return self::event($type, self::id('renew', $sid, "due:$due"), $sid, ['type' => $type, 'service' => $service], $state);

            case 'changepackage':
                $old = $st['pid'];
                if ($old !== null && (string) $old === $pid) {
                    if ((int) $st['pid_seq'] === 0) {
                        return self::skip("service $sid: package change without a product change (still product $pid)", true);
                    }
                    $seq = (int) $st['pid_seq']; // a re-run of the last change
                } else {
                    $seq = (int) $st['pid_seq'] + 1;
                }
                $st = array_merge($st, ['pid' => $pid, 'pid_seq' => $seq]);
                $body = ['type' => $type, 'service' => ['id' => $sid, 'billing_cycle' => $cycle], 'changes' => ['product_id' => $pid]];
                if ($old !== null && (string) $old !== $pid) {
                    $body['service']['product_id'] = (string) $old;
                }
                return self::event($type, self::id('changepackage', $sid, "pid:$pid#$seq"), $sid, $body, $st);

            case 'ipchange':
            default:
                $status = strtolower($facts['status'] ?? 'active');
                if (!in_array($status, ['active', 'suspended'], true)) {
                    return self::skip("service $sid: status $status, IP changes are forwarded for active and suspended services only", true);
                }
                $new = self::ip($facts['ip'] ?? null);
                if ($new === null) {
                    return self::skip("service $sid: dedicated IP \"" . ($facts['ip'] ?? '') . '" is not a valid IP; not forwarded', ($facts['ip'] ?? null) === null);
                }
                if ($state === null || $st['ip'] === null) {
                    // First sight of this service (it predates the module): remember its IP, nothing to change.
                    return ['event' => null, 'reason' => "service $sid: IP $new recorded as the last-known IP", 'quiet' => true, 'state' => array_merge($st, ['ip' => $new, 'pid' => $st['pid'] ?? $pid])];
                }
                if ($st['ip'] === $new) {
                    return self::skip("service $sid: IP unchanged", true);
                }
                $old = (string) $st['ip'];
                $seq = (int) $st['ip_seq'] + 1;
                $st = array_merge($st, ['ip' => $new, 'ip_seq' => $seq]);
                $service['ip'] = $old;
                return self::event($type, self::id('ipchange', $sid, "ip:$old>$new#$seq"), $sid, ['type' => $type, 'service' => $service, 'changes' => ['ip' => $new]], $st);
        }
    }

    /** "whmcs-<hook>-<serviceid>-<sha1 of what identifies the action>": stable when WHMCS re-runs the action. */
    public static function id(string $hook, string $sid, string $what): string
    {
        return "whmcs-$hook-$sid-" . sha1($what);
    }

    /** A service.created-shaped event for the admin page's "Send test event": its product is deliberately unknown, so nothing is bought. */
    public static function testEvent(int $now): array
    {
        $sid = 'whmcs-test-' . $now;
        $body = [
            'type' => 'service.created',
            'service' => [
                'id' => $sid,
                'product_id' => 'whmcs-connection-test',
                'billing_cycle' => 'monthly',
                'ip' => '192.0.2.1',
                'customer' => ['email' => 'connection-test@example.com', 'name' => 'WHMCS connection test'],
            ],
        ];
        return ['type' => 'service.created', 'webhook_id' => $sid . '-' . bin2hex(random_bytes(4)), 'service_id' => $sid, 'body' => $body];
    }

    public static function encode(array $body): string
    {
        return json_encode($body, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
    }

    /** At most $max characters, cut on a UTF-8 character boundary (mbstring may be missing). */
    public static function clip(string $s, int $max): string
    {
        if (strlen($s) <= $max) {
            return $s;
        }
        return preg_match('/^.{0,' . $max . '}/us', $s, $m) ? $m[0] : substr($s, 0, $max);
    }

    private static function event(string $type, string $id, string $sid, array $body, ?array $state): array
    {
        return ['event' => ['type' => $type, 'webhook_id' => $id, 'service_id' => $sid, 'body' => $body], 'reason' => null, 'quiet' => false, 'state' => $state];
    }

    private static function skip(string $reason, bool $quiet = false): array
    {
        return ['event' => null, 'reason' => $reason, 'quiet' => $quiet, 'state' => null];
    }
}
