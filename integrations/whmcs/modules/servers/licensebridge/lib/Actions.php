<?php
/**
 * What each WHMCS module function does, against the bridge's provisioning API through the shared
 * core in lib/ (LicenseBridgeClient: the calls; LicenseBridgeRules: IP syntax, cycles, dates;
 * LicenseBridgeMessages: what staff should do about each error code, generated from the bridge).
 * Only what is WHMCS's own stays here: where a setting lives in WHMCS, and the client area's words.
 *
 * WHMCS's conventions (developers.whmcs.com, "Provisioning Modules"): a core or custom function
 * returns the string "success" or an error message (shown to staff, or to the client for a
 * client-area action); TestConnection returns ['success' => bool, 'error' => string];
 * AdminServicesTabFields returns label => HTML; ClientArea returns a template and its vars.
 * Nothing here throws to WHMCS: the functions in licensebridge.php catch \Throwable.
 */

namespace LicenseBridgeWhmcs;

// WHMCS's guard (the namespace line has to come first in PHP).
if (!defined('WHMCS')) {
    die('This file cannot be accessed directly');
}

final class Actions
{
    public const MODULE = 'licensebridge';
    /** The panel's name in the User-Agent (license-bridge-whmcs/<version>), which the bridge records. */
    public const PANEL = 'whmcs';
    private const PREFIX = 'License Bridge: ';
    /**
     * Where, in WHMCS, the setting a shared hint names lives (the hints say "the module's server
     * settings" for every panel).
     */
    private const WHERE = [
        'unauthorized' => 'In WHMCS: System Settings > Servers > the bridge\'s server > Access Hash.',
        'unreachable' => 'In WHMCS: the server\'s Hostname (or IP Address), Port and Secure checkbox.',
    ];
    /** A service identifier no panel uses, for the connection test. */
    public const PROBE_SERVICE = 'whmcs-connection-test';

    public function __construct(private readonly Params $p)
    {
    }

    // ---- core functions ------------------------------------------------------------------------

    public function create(): string
    {
        $call = [
            'service_identifier' => $this->serviceIdentifier(),
            'package_identifier' => $this->packageIdentifier(),
            'ip' => $this->requireIp(),
            'billing_cycle' => $this->p->billingCycle(),
        ];
        if ($this->p->sendEmail() && $this->p->customerEmail() !== '') {
            $call['customer_email'] = $this->p->customerEmail();
            $call['customer_name'] = $this->p->customerName();
        }
        $r = $this->client()->create($call);
        if (!$r['ok']) {
            return $this->failure($r, 'Create');
        }
        $status = (string) ($r['data']['status'] ?? '');
        if ($status === 'active') {
            return 'success';
        }
        // A repeated Create for a licence that was suspended or terminated since: not "active", so not success.
        return $this->message('the licence of this service exists but is ' . ($status !== '' ? $status : 'not active')
            . ', so Create does not mark the service Active. Use Unsuspend for a suspended licence.');
    }

    public function suspend(): string
    {
        return $this->simple('suspend', 'Suspend');
    }

    public function unsuspend(): string
    {
        return $this->simple('unsuspend', 'Unsuspend');
    }

    public function terminate(): string
    {
        $r = $this->client()->terminate(['service_identifier' => $this->serviceIdentifier()]);
        if ($r['ok']) {
            return 'success';
        }
        // The bridge never bought a licence for this service (e.g. Create failed): nothing to end.
        if ($r['code'] === 'unknown_service') {
            $this->note('Terminate', 'the bridge has no licence for this service; nothing to terminate');
            return 'success';
        }
        return $this->failure($r, 'Terminate');
    }

    public function renew(): string
    {
        $call = ['service_identifier' => $this->serviceIdentifier(), 'next_due_date' => $this->p->nextDueDate()];
        $r = $this->client()->renew($call);
        return $r['ok'] ? 'success' : $this->failure($r, 'Renew');
    }

    public function changePackage(): string
    {
        $r = $this->client()->changePackage([
            'service_identifier' => $this->serviceIdentifier(),
            'package_identifier' => $this->packageIdentifier(),
        ]);
        return $r['ok'] ? 'success' : $this->failure($r, 'Change Package');
    }

    /** ['success' => bool, 'error' => string]; WHMCS passes only the server's fields here. */
    public function testConnection(): array
    {
        $r = $this->client(true)->info(['service_identifier' => self::PROBE_SERVICE]);
        // 404 unknown_service: the API answered and took the token. (200 would mean the same.)
        if ($r['ok'] || $r['code'] === 'unknown_service') {
            return ['success' => true, 'error' => ''];
        }
        if ($r['status'] === 404) {
            return ['success' => false, 'error' => $this->scrub(self::PREFIX . 'no provisioning API at ' . $this->p->baseUrl()
                . '/provision/v1 (HTTP 404): check the hostname and port')];
        }
        return ['success' => false, 'error' => $this->failure($r, 'Test Connection')];
    }

    // ---- admin area ----------------------------------------------------------------------------

    /** "Change IP": moves the licence to the IP the admin has just saved on the service. */
    public function changeIp(): string
    {
        $ip = $this->requireIp();
        $r = $this->client()->changeIp(['service_identifier' => $this->serviceIdentifier(), 'new_ip' => $ip]);
        return $r['ok'] ? 'success' : $this->failure($r, 'Change IP');
    }

    /** "Refresh": asks the bridge again; the service page then shows the fresh licence. */
    public function refresh(): string
    {
        $r = $this->client(true)->info(['service_identifier' => $this->serviceIdentifier()]);
        return $r['ok'] ? 'success' : $this->failure($r, 'Refresh');
    }

    /** Rows for the admin's service page: label => HTML (every value escaped here). */
    public function adminTabFields(): array
    {
        $r = $this->client(true)->info(['service_identifier' => $this->serviceIdentifier()]);
        if (!$r['ok']) {
            $text = $r['code'] === 'unknown_service'
                ? 'No licence yet: the bridge does not know this service. Run Create to buy it.'
                : $this->failure($r, 'Refresh');
            return ['License Bridge' => self::html($text)];
        }
        $d = $r['data'];
        $left = $d['ip_changes_left'] ?? null;
        $rows = [
            'Licence status' => self::html((string) ($d['status'] ?? '')),
            'Licence IP' => self::html((string) ($d['ip'] ?? '')),
            'Licence' => self::html(self::describe($d)),
            'Upstream term ends' => self::html(\LicenseBridgeRules::date($d['expires_at'] ?? null) ?? 'not known yet'),
            'Paid until' => self::html(\LicenseBridgeRules::date($d['paid_until'] ?? null) ?? 'not known yet'),
            'IP changes left' => self::html($left === null ? 'unlimited' : (string) (int) $left),
            'Last error' => self::html(is_string($d['last_error'] ?? null) && $d['last_error'] !== '' ? $d['last_error'] : 'none'),
            'Licence key' => self::html((string) ($d['license_key'] ?? '')),
        ];
        $command = is_string($d['install_command'] ?? null) ? $d['install_command'] : '';
        $rows['Install command'] = $command !== ''
            ? '<pre style="white-space:pre-wrap;margin:0">' . self::html($command) . '</pre>'
                . '<small>The bridge has no call to resend the install e-mail: send this command to the client if they need it again.</small>'
            : self::html('shown once the licence is active');
        return $rows;
    }

    // ---- client area ---------------------------------------------------------------------------

    /** The product details page: the documented ['templatefile', 'vars'] form. */
    public function clientArea(): array
    {
        return ['templatefile' => 'clientarea', 'vars' => $this->clientVars()];
    }

    /**
     * The client's "Change licence IP": a POST from the form in clientarea.tpl (WHMCS passes form
     * fields in $_POST / $_REQUEST, not in $params). Without a POST it shows the page with the form.
     *
     * @param array $request $_POST merged over $_REQUEST
     * @return string|array "success", a message for the client, or a page
     */
    public function clientChangeIp(array $request, string $method): string|array
    {
        if (strtoupper($method) !== 'POST' || !array_key_exists('lb_new_ip', $request)) {
            $here = 'clientarea.php?action=productdetails&id=' . (int) ($this->p->raw('serviceid') ?? 0) . '&modop=custom&a=ClientChangeIp';
            return $this->clientArea() + ['breadcrumb' => [$here => 'Change licence IP']];
        }
        if ($this->p->isAddon()) {
            return 'The IP of an add-on licence is changed by our staff: please open a support ticket.';
        }
        // The syntax only: which addresses may hold a licence (public, not reserved, not another
        // service's) is the bridge's decision, answered as ip_unusable / ip_in_use below.
        $ip = \LicenseBridgeRules::ip($request['lb_new_ip']);
        if ($ip === null) {
            return 'Please enter a valid IPv4 or IPv6 address.';
        }
        $r = $this->client()->changeIp(['service_identifier' => $this->serviceIdentifier(), 'new_ip' => $ip]);
        if ($r['ok'] || $r['pending']) {
            // Keep WHMCS's copy of the IP in step, or the admin's next "Change IP" would move it back.
            $recorded = $this->recordIp($ip);
            if ($r['pending']) {
                return 'Your licence is moving to ' . $ip . '; this takes a minute. Reload this page to see it done.';
            }
            return $recorded ? 'success'
                : 'Your licence now runs on ' . $ip . ', but our records could not be updated: please tell our staff.';
        }
        // The client's own words: clients see no error codes and no advice meant for staff.
        return match ($r['code']) {
            'ip_change_limit' => 'This licence\'s IP cannot be changed again: its product allows only a limited number of IP changes.'
                . ' Please contact our staff.',
            'ip_unusable' => 'A licence cannot be placed on ' . $ip . ': it needs a public IP address.',
            'ip_in_use' => 'The address ' . $ip . ' already has a licence of this kind.',
            'service_terminated' => 'This licence has been terminated; its IP cannot be changed.',
            'validation' => 'The IP address was refused: ' . $this->scrub((string) $r['error']),
            default => 'The IP could not be changed right now. Please try again later, or contact our staff.',
        };
    }

    /** Every var clientarea.tpl reads, for a licence the page knows nothing about yet. */
    public static function emptyClientVars(Params $p, bool $unavailable = false): array
    {
        return [
            'lb_serviceid' => (int) ($p->raw('serviceid') ?? 0),
            'lb_is_addon' => $p->isAddon(),
            'lb_known' => false,
            'lb_status' => '',
            'lb_ip' => '',
            'lb_licence' => '',
            'lb_install_command' => '',
            'lb_expires_at' => '',
            'lb_ip_changes_left' => null,
            'lb_can_change_ip' => false,
            'lb_unavailable' => $unavailable,
        ];
    }

    private function clientVars(): array
    {
        $vars = self::emptyClientVars($this->p);
        $r = $this->client(true)->info(['service_identifier' => $this->serviceIdentifier()]);
        if (!$r['ok']) {
            // The details stay in the module log; the client gets no URLs or codes.
            $vars['lb_unavailable'] = $r['code'] !== 'unknown_service';
            return $vars;
        }
        $d = $r['data'];
        $left = $d['ip_changes_left'] ?? null;
        $status = (string) ($d['status'] ?? '');
        return [
            'lb_known' => true,
            'lb_status' => $status,
            'lb_ip' => (string) ($d['ip'] ?? ''),
            'lb_licence' => self::describe($d),
            'lb_install_command' => is_string($d['install_command'] ?? null) ? $d['install_command'] : '',
            'lb_expires_at' => \LicenseBridgeRules::date($d['expires_at'] ?? null) ?? '',
            'lb_ip_changes_left' => $left === null ? null : (int) $left,
            'lb_can_change_ip' => !$this->p->isAddon() && $status === 'active' && ($left === null || (int) $left > 0),
        ] + $vars;
    }

    /** Saves the licence IP where WHMCS keeps it (Dedicated IP, or the "IP Address" custom field). */
    private function recordIp(string $ip): bool
    {
        $model = $this->p->model();
        try {
            $properties = $model?->serviceProperties;
            if (!is_object($properties)) {
                throw new \RuntimeException('the module parameters carry no model with serviceProperties');
            }
            $properties->save([$this->p->ipProperty() => $ip]);
            return true;
        } catch (\Throwable $e) {
            $this->note('ClientChangeIp', 'the licence moved to ' . $ip . ' but WHMCS did not record it: ' . $e->getMessage());
            return false;
        }
    }

    // ---- shared --------------------------------------------------------------------------------

    private function simple(string $call, string $action): string
    {
        $r = $this->client()->{$call}(['service_identifier' => $this->serviceIdentifier()]);
        return $r['ok'] ? 'success' : $this->failure($r, $action);
    }

    private function serviceIdentifier(): string
    {
        $id = $this->p->serviceIdentifier();
        if ($id === '') {
            throw new ModuleError('WHMCS passed no service id (serviceid)');
        }
        return $id;
    }

    private function packageIdentifier(): string
    {
        $id = $this->p->packageIdentifier();
        if ($id === '') {
            throw new ModuleError($this->p->isAddon()
                ? 'set "' . Params::OPTION_NAMES[Params::OPTION_ADDON_PRODUCT] . '" in the addon\'s Module Settings'
                : 'WHMCS passed no product id (pid)');
        }
        return $id;
    }

    private function requireIp(): string
    {
        $raw = $this->p->ip();
        if ($raw === '') {
            throw new ModuleError('this service has no licence IP: fill in its Dedicated IP, or a custom field named "'
                . Params::IP_FIELD . '", and save the service first');
        }
        $ip = \LicenseBridgeRules::ip($raw);
        if ($ip === null) {
            throw new ModuleError('the service\'s ' . ($this->p->ipProperty() === Params::IP_FIELD ? '"' . Params::IP_FIELD . '" field' : 'Dedicated IP')
                . ' holds "' . \LicenseBridgeRules::clip(\LicenseBridgeRules::printable($raw), 60) . '", which is not an IPv4 or IPv6 address');
        }
        return $ip;
    }

    /** The shared client with this server's URL and token; reads wait less than purchases. */
    private function client(bool $forReads = false): \LicenseBridgeClient
    {
        $url = $this->p->baseUrl();
        if ($url === '') {
            throw new ModuleError('the server has no hostname or IP address: open the server and fill in the bridge\'s hostname');
        }
        $token = $this->p->token();
        if ($token === '') {
            throw new ModuleError('the server has no token: put the bridge\'s PROVISIONING_TOKEN in its Access Hash');
        }
        $secrets = $this->secrets();
        $logger = static function (string $action, array $request, array $response) use ($secrets): void {
            Actions::log($action, $request, (string) ($response['body'] ?? ''), 'HTTP ' . (int) ($response['status'] ?? 0), $secrets);
        };
        return new \LicenseBridgeClient($url, $token, $forReads ? $this->p->readTimeout() : $this->p->timeout(), $logger, self::PANEL);
    }

    /**
     * The failure as WHMCS shows it to staff: the bridge's error, its code and what to do (the
     * shared LicenseBridgeMessages), plus where that setting is in WHMCS.
     */
    private function failure(array $r, string $action): string
    {
        if ($r['pending']) {
            return $this->message(\LicenseBridgeMessages::pending($action, (string) ($r['error'] ?? '')));
        }
        $where = self::WHERE[(string) ($r['code'] ?? '')] ?? '';
        return $this->message(\LicenseBridgeMessages::failure($r, $action) . ($where !== '' ? ' ' . $where : ''));
    }

    private function message(string $text): string
    {
        return $this->scrub(self::PREFIX . $text);
    }

    private function scrub(string $text): string
    {
        return \LicenseBridgeClient::scrub($text, $this->secrets());
    }

    private function secrets(): array
    {
        $token = $this->p->token();
        return array_values(array_unique(array_merge($token !== '' ? [$token] : [], $this->p->secrets())));
    }

    /** A line in WHMCS's module log for something the module decided without a call. */
    private function note(string $action, string $text): void
    {
        self::log($action, ['service_identifier' => $this->p->serviceIdentifier()], $text, $text, $this->secrets());
    }

    /**
     * logModuleCall with the secrets in replaceVars (WHMCS masks them) and scrubbed here as well:
     * WHMCS does not document its mask, nor whether it finds encoded copies.
     */
    public static function log(string $action, array|string $request, array|string $response, string $processed, array $secrets): void
    {
        if (!function_exists('logModuleCall')) {
            return;
        }
        $scrub = static function ($v) use (&$scrub, $secrets) {
            if (is_array($v)) {
                return array_map($scrub, $v);
            }
            return is_string($v) ? \LicenseBridgeClient::scrub($v, $secrets) : $v;
        };
        try {
            logModuleCall(self::MODULE, $action, $scrub($request), $scrub($response), $scrub($processed), $secrets);
        } catch (\Throwable $e) {
            // A log that fails must not fail the action.
        }
    }

    /**
     * Runs one module function; any \Throwable becomes WHMCS's error string, never an uncaught
     * throw (WHMCS does not document what it does with one). A helper, not a module function: its
     * name does not start with "licensebridge_", so no button or URL can reach it.
     */
    public static function run(string $action, array $params, callable $body): mixed
    {
        $p = new Params($params);
        try {
            return $body(new self($p));
        } catch (\Throwable $e) {
            return self::caught($action, $e, $p);
        }
    }

    /** Logs a failure the module caught, and returns the message WHMCS shows. */
    public static function caught(string $action, \Throwable $e, Params $p): string
    {
        $text = $e instanceof ModuleError
            ? self::PREFIX . $e->getMessage() . '.'
            : self::PREFIX . 'the module failed (' . get_class($e) . ': ' . $e->getMessage() . ').';
        $secrets = $p->secrets();
        $text = \LicenseBridgeClient::scrub($text, $secrets);
        self::log($action, ['service_identifier' => $p->serviceIdentifier()], $text, $text, $secrets);
        return $text;
    }

    /** "cpanel", "litespeed (litespeed4)" or "bundle cpanel-cloudlinux". */
    private static function describe(array $d): string
    {
        if (is_string($d['bundle'] ?? null) && $d['bundle'] !== '') {
            return 'bundle ' . $d['bundle'];
        }
        $type = (string) ($d['type'] ?? '');
        $variant = (string) ($d['variant'] ?? '');
        return $variant !== '' && $variant !== $type ? $type . ' (' . $variant . ')' : $type;
    }

    public static function html(string $s): string
    {
        return htmlspecialchars($s, ENT_QUOTES | ENT_SUBSTITUTE, 'UTF-8');
    }
}
