<?php
/**
 * license-bridge: HostBill provisioning ("Hosting") module.
 *
 * Sells software licences (cPanel, LiteSpeed, CloudLinux, ...) through a license-bridge service:
 * every account action HostBill runs becomes one call of the bridge's provisioning API
 * (/provision/v1, service contract section 8). The bridge buys, suspends and renews upstream,
 * exactly once per action, and answers synchronously.
 *
 * HostBill's layout and conventions this file rests on (see README.md, "Sources"):
 *  - includes/modules/Hosting/<name>/class.<name>.php holds `class <name> extends HostingModule`
 *    (HostBill's sample modules, tallship/oop_devkit: "class name MUST be the same like the filename");
 *  - $modname / $version / $description, $options (product settings, 'value' filled in by HostBill),
 *    $details (per-account fields; what a method writes into ['value'] is saved), $serverFields /
 *    $serverFieldsDescription (which Settings -> Apps fields to show, and their labels);
 *  - HostBill calls connect($connect) with the App's fields before any other method, then Create(),
 *    Suspend(), Unsuspend(), Terminate(), Renewal(), ChangePackage() or testConnection(); each returns
 *    true, or false after $this->addError(...) (HostBill shows the error and, for Create, leaves the
 *    account Pending);
 *  - account data in $this->account_details, $this->client_data, $this->account_config (form fields by
 *    variable name), $this->product_details.
 *
 * The bridge-facing rules are the shared core in lib/ (copies of integrations/shared/, written by
 * `npm run integrations:sync`): LicenseBridgeClient (the calls, User-Agent
 * license-bridge-hostbill/<version>), LicenseBridgeRules (IP syntax, cycle words, names, text) and
 * LicenseBridgeMessages (what staff should do about each error code, generated from the bridge).
 * What stays here is HostBill's own: its price-cycle letters, where a setting lives in HostBill,
 * and the customer's wording. Plain PHP 8.1+ with curl and json only (no mbstring).
 *
 * The token is only ever sent in the Authorization header (by LicenseBridgeClient); it is removed
 * from every log line and message this module writes.
 */

// Runs inside HostBill only. HostBill's sample modules carry no guard; this one stops a direct
// request before anything runs, and only where the file could not load anyway (no HostingModule).
class_exists('HostingModule') or exit('No direct access');

require_once __DIR__ . '/lib/LicenseBridgeRules.php';
require_once __DIR__ . '/lib/LicenseBridgeMessages.php';
require_once __DIR__ . '/lib/LicenseBridgeClient.php';

class license_bridge extends HostingModule
{
    /** Shown in the admin area as the module's name. */
    protected $modname = 'License Bridge';

    /** Raise it with every change of this class (HostBill compares it on update). */
    protected $version = '1.1.0';

    protected $description = 'Software licences (cPanel, LiteSpeed, CloudLinux, Imunify360, ...) bought, '
        . 'suspended, renewed and moved to a new IP through your license-bridge service.';

    /**
     * Settings -> Apps -> Add new App -> License Bridge: the bridge is this module's "server".
     * The provisioning token goes in Password (masked); Hash is read when Password is empty.
     */
    protected $serverFields = [
        'hostname' => true,
        'ip' => true,
        'maxaccounts' => false,
        'status_url' => false,
        'username' => false,
        'password' => true,
        'hash' => true,
        'ssl' => true,
        'nameservers' => false,
        'field1' => true,
        'field2' => false,
    ];

    protected $serverFieldsDescription = [
        'hostname' => 'Bridge hostname (or its full URL, e.g. https://licenses.example.com:8443)',
        'ip' => 'Bridge IP address (used when Hostname is empty)',
        'password' => 'Provisioning token (the bridge\'s PROVISIONING_TOKEN)',
        'hash' => 'Provisioning token, only if you did not put it in Password',
        'ssl' => 'Use HTTPS (leave ticked unless the bridge is on a private network)',
        'field1' => 'Port (empty: 443 with HTTPS, 80 without)',
    ];

    /** Products -> (product) -> Connect with App: per-product settings. */
    protected $options = [
        'option1' => [
            'name' => 'Bridge product id (a key of the bridge\'s config/products.json)',
            'value' => '',
            'type' => 'input',
            'default' => '',
        ],
        'option2' => [
            'name' => 'Variable name of the licence IP form field',
            'value' => 'ip',
            'type' => 'input',
            'default' => 'ip',
        ],
    ];

    /**
     * Per-account fields. option1-3 are the username/password/domain every HostBill module declares
     * (hidden: a licence has none); option4-6 are what this module saves after each answer.
     */
    protected $details = [
        'option1' => ['name' => 'username', 'value' => false, 'type' => 'hidden', 'default' => false],
        'option2' => ['name' => 'password', 'value' => false, 'type' => 'hidden', 'default' => false],
        'option3' => ['name' => 'domain', 'value' => false, 'type' => 'hidden', 'default' => false],
        'option4' => ['name' => 'License key', 'value' => false, 'type' => 'input', 'default' => false],
        'option5' => ['name' => 'License IP', 'value' => false, 'type' => 'input', 'default' => false],
        'option6' => ['name' => 'License status', 'value' => false, 'type' => 'input', 'default' => false],
    ];

    /** HostBill's one-letter price codes; its cycle words ("Semi-Annually", ...) go through LicenseBridgeRules::cycle. */
    private const LB_CYCLE_CODES = ['m' => 'monthly', 'q' => 'quarterly', 's' => 'semiannually', 'a' => 'annually', 'b' => 'biennially', 't' => 'triennially'];

    /** The panel's name in the User-Agent (license-bridge-hostbill/<version>), which the bridge records. */
    private const LB_PANEL = 'hostbill';

    /** Where, in HostBill, the setting a shared hint names lives (the hints say "the module's server settings"). */
    private const LB_WHERE = [
        'unauthorized' => 'In HostBill: the Password of the License Bridge App (Settings, Apps).',
        'unreachable' => 'In HostBill: the App\'s Hostname (or IP), Port (field 1) and Use HTTPS checkbox.',
    ];

    /** Seconds to wait for the bridge; above its PROVISION_WAIT_SECONDS (default 20). */
    private const LB_TIMEOUT = 30;

    private const LB_NO_CHANGES_LEFT = 'No IP changes are left for this licence: the product allows a limited number '
        . 'and all have been used. Please contact support to move it.';

    // Own state: names prefixed `lb` so they can never collide with HostingModule's members.
    private ?string $lbBaseUrl = null;
    private string $lbToken = '';
    private ?string $lbConfigProblem = 'connect() was not called';

    /**
     * The App's fields. Real modules read `host`/`secure` (EasyDCIM, Wisp.gg, Servertastic) while
     * HostBill's sample documents `hostname`/`ssl`; both spellings are read.
     *
     * @param array $connect
     */
    public function connect($connect)
    {
        $c = is_array($connect) ? $connect : [];
        $this->lbBaseUrl = null;
        $this->lbToken = '';
        $this->lbConfigProblem = null;

        foreach (['password', 'hash'] as $key) {
            $value = trim((string) ($c[$key] ?? ''));
            if ($value !== '') {
                $this->lbToken = $value;
                break;
            }
        }

        $host = '';
        foreach (['host', 'hostname', 'ip'] as $key) {
            $value = trim((string) ($c[$key] ?? ''));
            if ($value !== '') {
                $host = $value;
                break;
            }
        }
        $secure = true; // when HostBill passes neither key: HTTPS, the safe choice for a token
        foreach (['secure', 'ssl'] as $key) {
            if (array_key_exists($key, $c)) {
                $secure = self::lbTruthy($c[$key]);
                break;
            }
        }
        $port = trim((string) ($c['field1'] ?? ($c['port'] ?? '')));

        // A full URL typed into Hostname wins over the checkbox and the port field.
        if (preg_match('#^(https?)://#i', $host) === 1) {
            $parts = parse_url($host);
            if (!is_array($parts) || !isset($parts['host'])) {
                $this->lbConfigProblem = 'the App\'s Hostname is not a valid URL';
                return;
            }
            $secure = strtolower($parts['scheme'] ?? 'https') === 'https';
            $port = isset($parts['port']) ? (string) $parts['port'] : $port;
            $host = trim($parts['host'], '[]');
        }

        if ($host === '') {
            $this->lbConfigProblem = 'the App has no Hostname or IP address for the bridge';
        } elseif (preg_match('/^[A-Za-z0-9.:\-]+$/', $host) !== 1) {
            $this->lbConfigProblem = 'the App\'s Hostname may hold only a host name or an IP address';
        } elseif ($port !== '' && (preg_match('/^\d{1,5}$/', $port) !== 1 || (int) $port < 1 || (int) $port > 65535)) {
            $this->lbConfigProblem = 'the App\'s Port is not a port number';
        } elseif ($this->lbToken === '') {
            $this->lbConfigProblem = 'the App has no provisioning token (put the bridge\'s PROVISIONING_TOKEN in Password)';
        }
        if ($this->lbConfigProblem === null) {
            $this->lbBaseUrl = LicenseBridgeClient::baseUrl($secure ? 'https' : 'http', $host, $port);
        }
    }

    /**
     * Settings -> Apps -> Test Connection. Asks the bridge about a service that does not exist:
     * "unknown service" (404) proves the URL and the token; 401 means the token is wrong.
     */
    public function testConnection()
    {
        return $this->lbGuard('Test Connection', function (): bool {
            $r = $this->lbCall('info', ['service_identifier' => 'hostbill-connection-test'], 'GET');
            if ($r === null) {
                return false;
            }
            if ($r['ok'] || $r['code'] === 'unknown_service') {
                $this->addInfo('Connected to license-bridge at ' . $this->lbBaseUrl . '; the provisioning token was accepted.');
                return true;
            }
            return $this->lbFail('Test Connection', $r);
        });
    }

    /**
     * Buys the licence (or finds the one already bought for this account). True only once the
     * licence is active; a refusal or a purchase still running returns false with the reason, and
     * HostBill keeps the account Pending. Running Create again is always safe: it buys nothing twice.
     */
    public function Create()
    {
        return $this->lbGuard('Create', function (): bool {
            $account = $this->lbAccountId();
            $product = $this->lbOption('option1');
            $ip = $this->lbIp();
            $cycle = $this->lbCycle();
            if ($account === null || $ip === null || $cycle === null) {
                return false;
            }
            if ($product === '') {
                $this->addError('License Bridge: this product has no "Bridge product id" (Products -> Connect with App); nothing was bought.');
                return false;
            }
            $client = $this->lbArray($this->client_data ?? null);
            $name = trim(trim((string) ($client['firstname'] ?? '')) . ' ' . trim((string) ($client['lastname'] ?? '')));
            if ($name === '') {
                $name = trim((string) ($client['companyname'] ?? ($client['company'] ?? '')));
            }
            $r = $this->lbCall('create', [
                'service_identifier' => $account,
                'package_identifier' => $product,
                'ip' => $ip,
                'billing_cycle' => $cycle,
                'customer_email' => trim((string) ($client['email'] ?? '')),
                // Cleaned and cut to the bridge's 200 by the client (LicenseBridgeRules::customerName).
                'customer_name' => $name,
            ]);
            if ($r === null) {
                return false;
            }
            $this->lbRemember($r['data']);
            if (!$r['ok']) {
                return $this->lbFail('Create', $r, 'The licence is not active yet; the account stays Pending.');
            }
            if (($r['data']['status'] ?? null) !== 'active') {
                $this->addError('License Bridge: the licence for this account exists but is ' . self::lbText($r['data']['status'] ?? 'unknown')
                    . ', not active; nothing was bought.');
                return false;
            }
            $this->addInfo('License Bridge: licence ' . self::lbText($r['data']['license_key'] ?? '') . ' is active for ' . self::lbText($r['data']['ip'] ?? $ip) . '.');
            return true;
        });
    }

    public function Suspend()
    {
        return $this->lbGuard('Suspend', fn (): bool => $this->lbSimple('suspend', 'Suspend', 'suspended'));
    }

    public function Unsuspend()
    {
        return $this->lbGuard('Unsuspend', fn (): bool => $this->lbSimple('unsuspend', 'Unsuspend', 'unsuspended'));
    }

    /** Terminate: the bridge suspends the licence upstream and never renews it again. */
    public function Terminate()
    {
        return $this->lbGuard('Terminate', fn (): bool => $this->lbSimple('terminate', 'Terminate', 'terminated'));
    }

    /**
     * Renewal (HostBill's "Automatic Renew ... after receiving payment"): records the payment, paid
     * up to the account's next due date; the bridge's renewal sweep buys the upstream term in time.
     * Sending the date (not "one more cycle") makes a repeated Renewal change nothing.
     */
    public function Renewal()
    {
        return $this->lbGuard('Renewal', function (): bool {
            $account = $this->lbAccountId();
            if ($account === null) {
                return false;
            }
            $details = $this->lbArray($this->account_details ?? null);
            $due = trim((string) ($details['next_due'] ?? ''));
            if (preg_match('/^\d{4}-\d{2}-\d{2}/', $due) !== 1 || str_starts_with($due, '0000')) {
                $this->addError('License Bridge: the account has no next due date, so the payment could not be recorded; nothing was changed.');
                return false;
            }
            $r = $this->lbCall('renew', ['service_identifier' => $account, 'next_due_date' => $due]);
            if ($r === null) {
                return false;
            }
            $this->lbRemember($r['data']);
            if (!$r['ok']) {
                return $this->lbFail('Renewal', $r);
            }
            $this->addInfo('License Bridge: payment recorded; the licence is paid until ' . self::lbText(substr((string) ($r['data']['paid_until'] ?? $due), 0, 10)) . '.');
            return true;
        });
    }

    /**
     * Upgrade / downgrade. HostBill has already loaded the NEW product's settings into $options, so
     * option1 is the bridge product id to move to (the bridge allows LiteSpeed core changes).
     */
    public function ChangePackage()
    {
        return $this->lbGuard('ChangePackage', function (): bool {
            $account = $this->lbAccountId();
            if ($account === null) {
                return false;
            }
            $product = $this->lbOption('option1');
            if ($product === '') {
                $this->addError('License Bridge: the new product has no "Bridge product id"; nothing was changed.');
                return false;
            }
            $r = $this->lbCall('change-package', ['service_identifier' => $account, 'package_identifier' => $product]);
            if ($r === null) {
                return false;
            }
            $this->lbRemember($r['data']);
            if (!$r['ok']) {
                return $this->lbFail('Change Package', $r);
            }
            $this->addInfo('License Bridge: the licence is now product ' . self::lbText($r['data']['package_identifier'] ?? $product) . '.');
            return true;
        });
    }

    // ---------------------------------------------------------------------------------------
    // Client area (used by widgets/lblicence and user/class.license_bridge_controller.php)
    // ---------------------------------------------------------------------------------------

    /**
     * The licence as the customer sees it, ready for a template: `licence` (key, status, ip,
     * product, expires, install_command, ip_changes_left_text), `can_change_ip`, `lb_error`.
     *
     * @param string|int|null $accountId the account when the caller has it (a controller's $params)
     */
    public function lbLicence($accountId = null): array
    {
        $view = ['licence' => null, 'can_change_ip' => false, 'lb_error' => null, 'lb_info' => null];
        $ok = $this->lbGuard('client area', function () use (&$view, $accountId): bool {
            $account = $this->lbAccountId($accountId);
            if ($account === null) {
                return false;
            }
            $r = $this->lbCall('info', ['service_identifier' => $account], 'GET');
            if ($r === null) {
                return false;
            }
            if (!$r['ok']) {
                $view['lb_error'] = $r['code'] === 'unknown_service'
                    ? 'Your licence has not been set up yet.'
                    : 'The licence details cannot be shown right now. Please try again later.';
                $this->lbLogFailure('client area', $r);
                return false;
            }
            $view['licence'] = self::lbView($r['data']);
            $left = $r['data']['ip_changes_left'] ?? null;
            $view['can_change_ip'] = in_array($r['data']['status'] ?? '', ['active', 'suspended'], true) && ($left === null || (int) $left > 0);
            return true;
        });
        if (!$ok && $view['lb_error'] === null) {
            $view['lb_error'] = 'The licence details cannot be shown right now. Please try again later.';
        }
        return $view;
    }

    /**
     * The customer moves the licence to another IP, within the product's max_ip_changes. Returns
     * ['ok' => bool, 'error' => ?string, 'info' => ?string]; the message also goes to addError /
     * addInfo. The bridge enforces the limit (422 ip_change_limit, before anything is asked
     * upstream) and answers a move to the current IP with the licence, changing nothing.
     *
     * @param string|int|null $accountId the account when the caller has it
     */
    public function lbChangeIp($newIp, $accountId = null): array
    {
        $result = ['ok' => false, 'error' => null, 'info' => null];
        // The result carries plain text (the templates escape it); addError gets it escaped.
        $fail = function (string $message) use (&$result): bool {
            $result['error'] = $message;
            $this->addError(self::lbText($message));
            return false;
        };
        $this->lbGuard('Change IP', function () use ($newIp, $accountId, $fail, &$result): bool {
            // The syntax only: whether the address may hold a licence is the bridge's answer below.
            $ip = \LicenseBridgeRules::ip($newIp);
            if ($ip === null) {
                return $fail('Please enter a valid IPv4 or IPv6 address.');
            }
            $account = $this->lbAccountId($accountId);
            if ($account === null) {
                return $fail('This licence cannot be changed right now.');
            }
            $r = $this->lbCall('change-ip', ['service_identifier' => $account, 'new_ip' => $ip]);
            if ($r === null) {
                return $fail('The licence cannot be changed right now. Please try again later.');
            }
            $this->lbRemember($r['data']);
            if ($r['ok']) {
                $left = $r['data']['ip_changes_left'] ?? null;
                $result['ok'] = true;
                $result['info'] = 'The licence now runs on ' . (string) ($r['data']['ip'] ?? $ip) . '.'
                    . ($left === null ? '' : ' IP changes left: ' . (int) $left . '.');
                $this->addInfo(self::lbText($result['info']));
                return true;
            }
            $this->lbLogFailure('Change IP', $r);
            if ($r['pending']) {
                return $fail('The change to ' . $ip . ' is in progress. Please check again in a minute.');
            }
            if ($r['code'] === 'ip_change_limit') {
                return $fail(self::LB_NO_CHANGES_LEFT);
            }
            if (in_array($r['code'], ['ip_in_use', 'ip_unusable'], true) || ($r['status'] === 422 && isset($r['data']['errors']['new_ip']))) {
                $why = implode('; ', array_map('strval', (array) ($r['data']['errors']['new_ip'] ?? ['that address cannot be used'])));
                return $fail('The licence cannot be moved to ' . $ip . ': ' . \LicenseBridgeRules::clip(\LicenseBridgeRules::printable($why), 300) . '.');
            }
            return $fail('The licence could not be moved. Please try again later or contact support.');
        });
        if (!$result['ok'] && $result['error'] === null) {
            $result['error'] = 'The licence could not be moved. Please try again later or contact support.';
        }
        return $result;
    }

    // ---------------------------------------------------------------------------------------
    // Internals
    // ---------------------------------------------------------------------------------------

    /** suspend / unsuspend / terminate. */
    private function lbSimple(string $call, string $label, string $done): bool
    {
        $account = $this->lbAccountId();
        if ($account === null) {
            return false;
        }
        $r = $this->lbCall($call, ['service_identifier' => $account]);
        if ($r === null) {
            return false;
        }
        $this->lbRemember($r['data']);
        if ($r['ok']) {
            $this->addInfo('License Bridge: licence ' . self::lbText($r['data']['license_key'] ?? '') . ' ' . $done . '.');
            return true;
        }
        // Terminating an account whose licence was never bought: nothing to stop.
        if ($call === 'terminate' && $r['code'] === 'unknown_service' && !$this->lbDetail('option4')) {
            $this->addInfo('License Bridge: no licence was ever bought for this account; nothing to terminate.');
            return true;
        }
        return $this->lbFail($label, $r);
    }

    /**
     * One call of the provisioning API; null (after addError) when the App is not set up. Each call
     * is logged (token removed) through HostBill's system log.
     */
    private function lbCall(string $call, array $params, string $method = 'POST'): ?array
    {
        if ($this->lbBaseUrl === null) {
            $this->addError('License Bridge: ' . ($this->lbConfigProblem ?? 'the App is not set up') . ' (Settings -> Apps).');
            return null;
        }
        $client = new LicenseBridgeClient($this->lbBaseUrl, $this->lbToken, self::LB_TIMEOUT, function (string $action, array $request, array $response): void {
            $this->lbLog('system', 'license-bridge ' . $action . ' ' . json_encode($request['params'] ?? [], JSON_UNESCAPED_SLASHES)
                . ' -> HTTP ' . (int) ($response['status'] ?? 0) . ' ' . (string) ($response['body'] ?? ''));
        }, self::LB_PANEL);
        return $client->call($call, $params, $method);
    }

    /**
     * Turns a failed answer into HostBill's error form: addError + false. The text is the shared
     * LicenseBridgeMessages (the bridge's error, its code, what to do), then where that setting is
     * in HostBill, then `$note` (e.g. that the account stays Pending).
     */
    private function lbFail(string $label, array $r, string $note = ''): bool
    {
        $this->lbLogFailure($label, $r);
        $note = $note === '' ? '' : ' ' . $note;
        if ($r['pending']) {
            $key = is_string($r['data']['license_key'] ?? null) ? 'licence ' . $r['data']['license_key'] . ': ' : '';
            $this->addError('License Bridge: ' . self::lbText(\LicenseBridgeMessages::pending($label, $key . (string) ($r['error'] ?? ''))) . $note);
            return false;
        }
        $where = self::LB_WHERE[(string) ($r['code'] ?? '')] ?? '';
        $this->addError('License Bridge: ' . $label . ' failed: ' . self::lbText(\LicenseBridgeMessages::failure($r, $label) . ($where !== '' ? ' ' . $where : '')) . $note);
        return false;
    }

    private function lbLogFailure(string $label, array $r): void
    {
        $this->lbLog('error', 'license-bridge ' . $label . ' for account ' . ($this->lbAccountId(null, false) ?? '?')
            . ': HTTP ' . (int) $r['status'] . ' ' . ($r['code'] ?? '') . ' ' . (string) ($r['error'] ?? ''));
    }

    /** Writes to HostBill's system / error log when HostBill provides it; never with the token. */
    private function lbLog(string $level, string $message): void
    {
        $message = LicenseBridgeClient::scrub($message, [$this->lbToken]);
        $fn = $level === 'error' ? 'hbm_log_error' : 'hbm_log_system';
        try {
            if (function_exists($fn)) {
                $fn($message, 'License Bridge');
            }
        } catch (\Throwable $e) {
            // A failing log never breaks the action.
        }
    }

    /**
     * Runs a module action so that nothing escapes into HostBill's request: an unexpected error
     * becomes addError + false.
     */
    private function lbGuard(string $label, callable $action): bool
    {
        try {
            return (bool) $action();
        } catch (\Throwable $e) {
            $this->lbLog('error', 'license-bridge ' . $label . ': ' . get_class($e) . ': ' . $e->getMessage());
            $this->addError('License Bridge: ' . $label . ' failed: ' . self::lbText(LicenseBridgeClient::scrub($e->getMessage(), [$this->lbToken])) . '.');
            return false;
        }
    }

    /** The account id, the bridge's service_identifier (the same id HostBill's webhooks carry). */
    private function lbAccountId($given = null, bool $report = true): ?string
    {
        $id = $given;
        if ($id === null || $id === '') {
            $id = $this->lbArray($this->account_details ?? null)['id'] ?? null;
        }
        if (($id === null || $id === '') && method_exists($this, 'getAccount')) {
            $account = $this->getAccount();
            $id = is_array($account) ? ($account['id'] ?? null) : null;
        }
        $id = is_scalar($id) ? trim((string) $id) : '';
        if (preg_match('/^[A-Za-z0-9_.:\-]{1,64}$/', $id) !== 1) {
            if ($report) {
                $this->addError('License Bridge: the account id is missing; nothing was sent to the bridge.');
            }
            return null;
        }
        return $id;
    }

    /**
     * The licence IP: the product's form field (variable `ip` unless option2 names another), read
     * from $account_config, then account_details['forms'] / ['customforms']; else the account's
     * domain when it holds an IP address.
     */
    private function lbIp(): ?string
    {
        $variable = $this->lbOption('option2');
        $variable = $variable === '' ? 'ip' : $variable;
        $config = $this->lbArray($this->account_config ?? null);
        $details = $this->lbArray($this->account_details ?? null);

        $candidates = [
            $config[$variable]['value'] ?? null,
            $details['forms'][$variable]['value'] ?? null,
        ];
        foreach ($this->lbArray($details['customforms'] ?? null) as $form) {
            if (is_array($form) && strcasecmp((string) ($form['variable'] ?? ''), $variable) === 0) {
                $data = $form['data'] ?? null;
                $candidates[] = is_array($data) ? reset($data) : $data;
            }
        }
        foreach ($candidates as $value) {
            if (!is_scalar($value) || trim((string) $value) === '') {
                continue;
            }
            $ip = \LicenseBridgeRules::ip($value);
            if ($ip === null) {
                $this->addError('License Bridge: the "' . self::lbText($variable) . '" form field does not hold a valid IPv4 or IPv6 address; nothing was bought.');
                return null;
            }
            return $ip;
        }
        foreach ([$details['domain'] ?? null, $this->lbDetail('option3')] as $value) {
            $ip = \LicenseBridgeRules::ip($value);
            if ($ip !== null) {
                return $ip;
            }
        }
        $this->addError('License Bridge: the account has no licence IP. Add a form field with variable "' . self::lbText($variable)
            . '" to the product (or put the IP in the account\'s domain); nothing was bought.');
        return null;
    }

    private function lbCycle(): ?string
    {
        $raw = $this->lbArray($this->account_details ?? null)['billingcycle'] ?? '';
        $raw = is_scalar($raw) ? trim((string) $raw) : '';
        $cycle = self::LB_CYCLE_CODES[strtolower($raw)] ?? \LicenseBridgeRules::cycle($raw);
        if (!is_string($cycle)) {
            $this->addError('License Bridge: the billing cycle "' . self::lbText($raw) . '" is not one a licence can be sold on '
                . '(Monthly, Quarterly, Semi-Annually, Annually, Biennially, Triennially); nothing was bought.');
            return null;
        }
        return $cycle;
    }

    private function lbOption(string $key): string
    {
        $value = $this->lbArray($this->options ?? null)[$key]['value'] ?? '';
        return is_scalar($value) ? trim((string) $value) : '';
    }

    private function lbDetail(string $key): string
    {
        $value = $this->lbArray($this->details ?? null)[$key]['value'] ?? '';
        return is_scalar($value) ? trim((string) $value) : '';
    }

    /** Saves what HostBill keeps per account after an answer (licence key, IP, status). */
    private function lbRemember(array $data): void
    {
        $map = ['option4' => 'license_key', 'option5' => 'ip', 'option6' => 'status'];
        foreach ($map as $option => $field) {
            if (isset($data[$field]) && is_scalar($data[$field]) && (string) $data[$field] !== '' && isset($this->details[$option])) {
                $this->details[$option]['value'] = (string) $data[$field];
            }
        }
    }

    private function lbArray($value): array
    {
        return is_array($value) ? $value : [];
    }

    private static function lbTruthy($value): bool
    {
        if (is_bool($value)) {
            return $value;
        }
        return in_array(strtolower(trim((string) $value)), ['1', 'on', 'yes', 'true'], true);
    }

    /** Text from the bridge or the customer, safe inside a HostBill message (printable, no markup, bounded). */
    private static function lbText($value): string
    {
        $text = \LicenseBridgeRules::printable(is_scalar($value) ? (string) $value : '');
        return htmlspecialchars(\LicenseBridgeRules::clip($text, 1000), ENT_NOQUOTES | ENT_SUBSTITUTE, 'UTF-8');
    }

    /** The licence answer as display strings for the client-area templates (escaped there). */
    private static function lbView(array $d): array
    {
        $product = implode(' ', array_filter([
            is_string($d['bundle'] ?? null) ? $d['bundle'] : null,
            is_string($d['type'] ?? null) ? $d['type'] : null,
            is_string($d['variant'] ?? null) ? '(' . $d['variant'] . ')' : null,
        ]));
        $left = $d['ip_changes_left'] ?? null;
        return [
            'license_key' => (string) ($d['license_key'] ?? ''),
            'status' => (string) ($d['status'] ?? ''),
            'ip' => (string) ($d['ip'] ?? ''),
            'product' => $product,
            'expires' => is_string($d['expires_at'] ?? null) ? substr($d['expires_at'], 0, 10) : '',
            'install_command' => is_string($d['install_command'] ?? null) ? $d['install_command'] : '',
            'ip_changes_left_text' => $left === null ? 'unlimited' : (string) (int) $left,
        ];
    }
}
