<?php

/**
 * license-bridge for Paymenter v1: a server extension that provisions software licences through
 * the bridge's provisioning API (service contract, section 8).
 *
 * Layout and calling convention are Paymenter's (v1.5.8, commit e9ff5c5e): the class
 * Paymenter\Extensions\Servers\LicenseBridge\LicenseBridge in extensions/Servers/LicenseBridge/,
 * built by App\Helpers\ExtensionHelper::getExtension() with the server's settings as $config, and
 * called with ($service, $productSettings, $serviceProperties) by the queued server jobs
 * (App\Jobs\Server\*Job), the admin's "Trigger Extension Action" and the client service page.
 *
 * Rules kept everywhere:
 * - A refusal or an unfinished purchase throws an \Exception with a readable message: the queued
 *   job is then marked failed (and report()ed), the admin action shows it in red.
 * - Every call is safe to repeat: the bridge keys a licence by Paymenter's service id, so a second
 *   createServer() buys nothing.
 * - The token travels only in the Authorization header (LicenseBridgeClient); it is never logged,
 *   put in a message, or rendered. It is stored encrypted from the server's first save (enabled()).
 * - The shared core (LicenseBridgeClient.php, LicenseBridgeRules.php, LicenseBridgeMessages.php,
 *   copies of integrations/shared/) sends every call, cleans names, checks IP syntax, maps billing
 *   cycles and words every error's hint; this file adds only what is Paymenter's.
 */

namespace Paymenter\Extensions\Servers\LicenseBridge;

use App\Attributes\ExtensionMeta;
use App\Classes\Extension\Server;
use App\Exceptions\DisplayException;
use App\Helpers\ExtensionHelper;
use App\Models\Product;
use App\Models\Service;
use Exception;
use Illuminate\Http\Request;
use Illuminate\Routing\Events\Routing;
use Illuminate\Support\Facades\DB;
use Illuminate\Support\Facades\Event;
use Illuminate\Support\Facades\Log;
use Illuminate\Support\Facades\Route;
use Illuminate\Support\Facades\Session;
use Throwable;

require_once __DIR__ . '/LicenseBridgeClient.php';

#[ExtensionMeta(
    name: 'License Bridge',
    description: 'Software licences (cPanel, LiteSpeed, CloudLinux, ...) through a license-bridge service.',
    version: '1.0.0',
    author: 'license-bridge',
)]
class LicenseBridge extends Server
{
    /** Service property keys this extension reads and writes. */
    public const IP_PROPERTY = 'license_ip';
    public const KEY_PROPERTY = 'license_key';

    /** The client area's change-IP form posts to this route (routes.php). */
    public const CHANGE_IP_ROUTE = 'extensions.servers.licensebridge.change-ip';

    /** Paymenter's name for each call (Trigger Extension Action), as the shared hints say it ("run Create server again"). */
    private const ACTIONS = [
        'create' => 'Create server',
        'suspend' => 'Suspend server',
        'unsuspend' => 'Unsuspend server',
        'terminate' => 'Terminate server',
        'change-package' => 'Upgrade server',
        'renew' => 'Upgrade server',
    ];

    /** A page view or a payment must not hang on the bridge for the whole job timeout. */
    private const INTERACTIVE_TIMEOUT = 10;

    /** Licence answers already fetched in this request: getActions() and getView() both need one. */
    private static array $infoCache = [];

    // ------------------------------------------------------------------ settings forms

    /** Server settings (Admin → Servers). The token is stored encrypted (Setting "encrypted", see enabled()). */
    public function getConfig($values = []): array
    {
        return [
            [
                'name' => 'bridge_url',
                'label' => 'Bridge URL',
                'type' => 'text',
                'required' => true,
                'validation' => 'url',
                'placeholder' => 'https://licenses.example.com',
                'description' => 'Where license-bridge listens (scheme, host, optional port); /provision/v1 is added.',
            ],
            [
                'name' => 'token',
                'label' => 'Provisioning token',
                'type' => 'password',
                'required' => true,
                'encrypted' => true,
                'description' => "The bridge's PROVISIONING_TOKEN. Sent only in the Authorization header, never logged.",
            ],
            [
                'name' => 'timeout',
                'label' => 'Timeout (seconds)',
                'type' => 'number',
                'required' => false,
                'default' => 30,
                'min_value' => 5,
                'max_value' => 110,
                'database_type' => 'integer',
                'description' => "Keep it above the bridge's PROVISION_WAIT_SECONDS (20) and below Paymenter's job timeout (120).",
            ],
            [
                'name' => 'allow_private_ips',
                'label' => 'Allow private IPs',
                'type' => 'checkbox',
                'required' => false,
                'database_type' => 'boolean',
                'description' => 'Tick only when the bridge runs with ALLOW_PRIVATE_IPS=true; otherwise checkout refuses private addresses.',
            ],
        ];
    }

    /**
     * Admin "Test Connection" (built with the unsaved form values as $config): true, or the reason
     * it failed. Asks the bridge about a service that does not exist: "unknown service" proves the
     * URL and the token.
     */
    public function testConfig(): bool|string
    {
        try {
            if (!$this->bridgeUrl()) {
                return 'the Bridge URL must start with http:// or https://';
            }
            if ((string) $this->config('token') === '') {
                return 'the provisioning token is empty';
            }
            $r = $this->client(self::INTERACTIVE_TIMEOUT)->info(['service_identifier' => 'paymenter-connection-test']);
            if ($r['ok'] || $r['code'] === 'unknown_service') {
                return true;
            }
            if ($r['status'] === 401) {
                return 'the bridge refused the token (HTTP 401): use its PROVISIONING_TOKEN';
            }
            return $r['error'] ?? ('unexpected answer HTTP ' . $r['status']);
        } catch (Throwable $e) {
            return 'could not test the connection: ' . $e->getMessage();
        }
    }

    /**
     * Admin → Servers → Create: Paymenter calls this right after the create page stored the new
     * server's settings (CreateServer::handleRecordCreation, then ExtensionHelper::call($record,
     * 'enabled', [$record])). That page stores each value with the settings table's defaults
     * (type string, not encrypted), while the edit page applies each option's 'encrypted' and
     * 'database_type' (EditServer::handleRecordUpdate): without this, the token stayed in clear
     * until the server was saved a second time. Each of this server's settings is given the flags
     * its option declares, as the edit page stores it; saving a setting flagged encrypted encrypts
     * its value (App\Events\Setting\Saving). Paymenter reports (mayFail) anything thrown here.
     *
     * @param \App\Models\Server $server the server just created
     */
    public function enabled($server): void
    {
        foreach ($this->getConfig() as $option) {
            $setting = $server->settings()->where('key', $option['name'])->first();
            if ($setting === null) {
                continue;
            }
            $encrypted = (bool) ($option['encrypted'] ?? false);
            $type = (string) ($option['database_type'] ?? 'string');
            if ((bool) $setting->encrypted === $encrypted && (string) $setting->type === $type) {
                continue;
            }
            // Retrieved, so its value is the plain one: Saving encrypts it now.
            $setting->encrypted = $encrypted;
            $setting->type = $type;
            $setting->save();
        }
    }

    /** Product settings (Admin → Products → the product's server tab). */
    public function getProductConfig($values = []): array
    {
        return [
            [
                'name' => 'bridge_product_id',
                'label' => 'Bridge product id',
                'type' => 'text',
                'required' => true,
                'validation' => 'regex:/^[A-Za-z0-9_.:-]{1,64}$/',
                'placeholder' => '12',
                'description' => "A product id of the bridge's config/products.json, e.g. 12 (cPanel) or 13 (LiteSpeed).",
            ],
        ];
    }

    /**
     * The checkout field: the IP the licence is bound to. Paymenter's checkout validates it with
     * these rules (Livewire Products\Checkout::rules) and stores it as the service property
     * "license_ip" (Livewire Cart::checkout).
     */
    public function getCheckoutConfig(Product $product, $values = [], $settings = []): array
    {
        return [
            [
                'name' => self::IP_PROPERTY,
                'label' => 'Server IP address',
                'type' => 'text',
                'required' => true,
                'placeholder' => '203.0.113.10',
                'description' => 'The public IP address of the server the licence is for.',
                'validation' => [
                    'ip',
                    function ($attribute, $value, $fail) {
                        $problem = $this->ipProblem(is_string($value) ? $value : '');
                        if ($problem !== null) {
                            $fail('The :attribute ' . $problem . '.');
                        }
                    },
                ],
            ],
        ];
    }

    // ------------------------------------------------------------------ lifecycle (queued jobs, admin actions)

    /**
     * Buys the licence (CreateJob: a paid pending service, a free checkout, or the admin's
     * "Create"). The bridge keys it by the Paymenter service id, so a repeated call answers the
     * same licence and buys nothing. Returns data for the "new_server_created" e-mail.
     */
    public function createServer(Service $service, $settings, $properties)
    {
        $properties = (array) $properties;
        $product = $this->bridgeProduct((array) $settings);
        if ((int) ($service->quantity ?? 1) > 1) {
            throw new Exception("license-bridge: service #{$service->id} has quantity {$service->quantity}; one service is one licence (set the product's quantity option to disabled)");
        }
        $ip = trim((string) ($properties[self::IP_PROPERTY] ?? ''));
        if ($ip === '') {
            throw new Exception("license-bridge: service #{$service->id} has no IP address (service property " . self::IP_PROPERTY . '); set it, then run Create again');
        }
        $user = $service->user;
        $r = $this->client()->create([
            'service_identifier' => (string) $service->id,
            'package_identifier' => $product,
            'ip' => $ip,
            'customer_email' => $user ? (string) $user->email : null,
            // Cleaned by the shared rules (LicenseBridgeRules::customerName): a name never blocks a purchase.
            'customer_name' => $user ? (string) $user->name : null,
            'billing_cycle' => $this->billingCycle($service),
            'next_due_date' => $this->paidUntil($service),
        ]);

        // Known as soon as the bridge has the order, also while it is still buying.
        $key = $r['data']['license_key'] ?? null;
        if (($r['ok'] || $r['pending']) && is_string($key) && $key !== '') {
            $this->remember($service, self::KEY_PROPERTY, 'Licence key', $key);
        }
        if ($r['pending']) {
            throw new Exception("license-bridge, service #{$service->id}: " . \LicenseBridgeMessages::pending(self::ACTIONS['create'], (string) $r['error']));
        }
        if (!$r['ok']) {
            throw $this->failure('create the licence of', $service, $r, 'create');
        }
        $licence = $r['data'];
        if (is_string($licence['ip'] ?? null) && $licence['ip'] !== $ip) {
            // The bridge writes addresses in one canonical form.
            $this->remember($service, self::IP_PROPERTY, 'Server IP address', $licence['ip']);
        }
        if (($licence['status'] ?? null) !== 'active') {
            $why = is_string($licence['last_error'] ?? null) ? ': ' . $licence['last_error'] : '';
            throw new Exception("license-bridge: service #{$service->id} has its licence, but it is " . ($licence['status'] ?? 'unknown') . $why);
        }

        return [
            'license_key' => (string) $licence['license_key'],
            'license_ip' => (string) ($licence['ip'] ?? $ip),
            'install_command' => (string) ($licence['install_command'] ?? ''),
        ];
    }

    /** SuspendJob (overdue) and the admin's "Suspend". */
    public function suspendServer(Service $service, $settings, $properties)
    {
        return $this->statusCall('suspend', $service, (array) $properties);
    }

    /**
     * UnsuspendJob (a suspended service paid) and the admin's "Unsuspend". Also sends the
     * service's expiry as the paid-until date: the payment that unsuspends is a renewal.
     */
    public function unsuspendServer(Service $service, $settings, $properties)
    {
        $properties = (array) $properties;
        $this->statusCall('unsuspend', $service, $properties);
        $this->sendPaidUntil($service, $properties, true, 'The licence is unsuspended, but ');
        return true;
    }

    /** TerminateJob (cancellation, long overdue), the admin's "Terminate" and "Delete service". */
    public function terminateServer(Service $service, $settings, $properties)
    {
        return $this->statusCall('terminate', $service, (array) $properties);
    }

    /**
     * UpgradeJob after a paid upgrade: $settings are the NEW product's. The bridge applies a
     * change between LiteSpeed products (a core change) and refuses others with a clear error.
     */
    public function upgradeServer(Service $service, $settings, $properties)
    {
        $properties = (array) $properties;
        $product = $this->bridgeProduct((array) $settings);
        $r = $this->client()->changePackage($this->target($service, $properties) + ['package_identifier' => $product]);
        if (!$r['ok']) {
            throw $this->failure("change to product {$product} the licence of", $service, $r, 'change-package');
        }
        $this->sendPaidUntil($service, $properties, true, 'The package is changed, but ');
        return true;
    }

    // ------------------------------------------------------------------ renewals

    /**
     * Runs on every request and console command (AppServiceProvider::boot). Two things:
     *
     * - The change-IP route. Paymenter loads an extension's routes only from its boot() (Paymenter's
     *   docs, "Routes, Views etc"; Stripe, PayPal, Mollie do the same). Under `php artisan
     *   route:cache` Laravel replaces the routes with the cached ones once the application has
     *   booted (RouteServiceProvider::loadCachedRoutes, Router::setCompiledRoutes), so a route added
     *   in boot() is dropped, and the cache holds it only if it was made while this server existed.
     *   The router fires Illuminate\Routing\Events\Routing before it matches each request, after the
     *   cache is loaded; a route added then is kept (CompiledRouteCollection::add) and matched
     *   when the cached ones do not match. So the route is added here for an uncached application,
     *   and again, if missing, when each request is routed. It is named in its action, so the name
     *   is known at once (a compiled collection never refreshes its name look-ups).
     * - Renewals. Paymenter has no renew hook: a paid renewal of an active service only moves
     *   expires_at (Services\Service\RenewServiceService). This listener, registered as Paymenter's
     *   own Stripe gateway does, sends the new expiry to the bridge as the paid-until date; the
     *   bridge's renewal sweep then renews upstream before its term ends. Never throws.
     *
     * Paymenter calls boot() once per application (AppServiceProvider::boot, once per extension),
     * so nothing here guards against a second call: `php artisan route:cache` boots a second, fresh
     * application in the same process, and its routes and listeners must be registered too.
     */
    public function boot()
    {
        self::registerRoutes();
        Event::listen(Routing::class, static function (): void {
            self::registerRoutes();
        });
        Event::listen(\App\Events\Service\Updated::class, static function ($event): void {
            self::onServiceUpdated($event->service ?? null);
        });
    }

    /** Adds the change-IP route unless the router has it already (cached, or added before). */
    public static function registerRoutes(): void
    {
        if (!Route::has(self::CHANGE_IP_ROUTE)) {
            require __DIR__ . '/routes.php';
        }
    }

    /** A service was saved: when its expiry moved while active, tell the bridge. */
    public static function onServiceUpdated($service): void
    {
        try {
            if (!$service instanceof Service || !$service->isDirty('expires_at') || $service->status !== 'active' || !$service->expires_at) {
                return;
            }
            $server = $service->product?->server;
            if (!$server || $server->extension !== class_basename(static::class)) {
                return;
            }
            $properties = ExtensionHelper::getServiceProperties($service);
            if (empty($properties[self::KEY_PROPERTY])) {
                return; // not bought yet: createServer() sends the expiry itself
            }
            $extension = new static(ExtensionHelper::settingsToArray($server->settings));
            // Only once the payment is committed (an admin's edit runs in a transaction).
            DB::afterCommit(static function () use ($extension, $service, $properties): void {
                try {
                    $extension->sendPaidUntil($service, $properties, false, '', self::INTERACTIVE_TIMEOUT);
                } catch (Throwable $e) {
                    report($e);
                }
            });
        } catch (Throwable $e) {
            report($e);
        }
    }

    /**
     * Records the service's expiry as the licence's paid-until date (the bridge's renew call with
     * an absolute next_due_date, so repeating it changes nothing). Throws only when $throw.
     */
    public function sendPaidUntil(Service $service, array $properties, bool $throw, string $prefix = '', ?int $timeoutCap = null): void
    {
        $due = $this->paidUntil($service);
        if ($due === null) {
            return;
        }
        $r = $this->client($timeoutCap)->renew($this->target($service, $properties) + ['next_due_date' => $due]);
        if ($r['ok'] || $r['pending']) {
            return; // pending: stored by the bridge, applied shortly
        }
        $failure = $this->failure("record the paid-until date {$due} of", $service, $r, 'renew')->getMessage();
        if ($throw) {
            throw new Exception($prefix . $failure);
        }
        // Not thrown (a payment must go through), but reported: Debug Logs → exception, like a failed job.
        report(new Exception($failure . ' (Trigger Extension Action → Upgrade server sends the date again.)'));
    }

    // ------------------------------------------------------------------ client area

    /**
     * The client service page (only for active services): the licence as text lines, and a
     * "Licence" tab with the install command and the change-IP form.
     */
    public function getActions(Service $service, $settings, $properties): array
    {
        $properties = (array) $properties;
        $r = $this->licence($service, $properties);
        if (!$r['ok']) {
            $fields = [['type' => 'text', 'label' => 'Licence', 'text' => 'details unavailable right now, please try again later']];
            if (!empty($properties[self::KEY_PROPERTY])) {
                array_unshift($fields, ['type' => 'text', 'label' => 'Licence key', 'text' => (string) $properties[self::KEY_PROPERTY]]);
            }
            return $fields;
        }
        $l = $r['data'];
        $left = $l['ip_changes_left'] ?? null;
        return [
            ['type' => 'text', 'label' => 'Licence key', 'text' => (string) ($l['license_key'] ?? '')],
            ['type' => 'text', 'label' => 'Licence status', 'text' => (string) ($l['status'] ?? '')],
            ['type' => 'text', 'label' => 'Licensed IP', 'text' => (string) ($l['ip'] ?? '')],
            ['type' => 'text', 'label' => 'IP changes left', 'text' => $left === null ? 'unlimited' : (string) $left],
            ['type' => 'view', 'name' => 'license', 'label' => 'Licence'],
        ];
    }

    /** The "Licence" tab (echoed unescaped by the theme, so every value is escaped here). */
    public function getView(Service $service, $settings, $properties, $view)
    {
        $r = $this->licence($service, (array) $properties);
        if (!$r['ok']) {
            return '<div class="p-4"><p>The licence details are unavailable right now. Please try again in a few minutes.</p></div>';
        }
        $l = $r['data'];
        $e = static fn ($v): string => htmlspecialchars((string) $v, ENT_QUOTES | ENT_SUBSTITUTE, 'UTF-8');
        $status = (string) ($l['status'] ?? '');
        $left = $l['ip_changes_left'] ?? null;

        $html = '<div class="p-4 flex flex-col gap-3" data-license-bridge="license">';
        $html .= '<div><span class="mr-2">Status:</span><span class="font-semibold">' . $e($status) . '</span></div>';
        $html .= '<div><span class="mr-2">Licensed IP:</span><span class="font-semibold">' . $e($l['ip'] ?? '') . '</span></div>';
        if (!empty($l['expires_at'])) {
            $html .= '<div><span class="mr-2">Licence term ends:</span><span>' . $e(substr((string) $l['expires_at'], 0, 10)) . '</span></div>';
        }
        $command = (string) ($l['install_command'] ?? '');
        if ($command !== '') {
            $html .= '<div><p class="mb-1">Install command (run it as root on the licensed server):</p>'
                . '<pre class="p-2 rounded bg-background overflow-x-auto" data-install-command><code>' . $e($command) . '</code></pre></div>';
        } else {
            $html .= '<p>The install command appears here once the licence is active.</p>';
        }

        $html .= '<h4 class="text-lg font-semibold mt-2">Change the licensed IP</h4>';
        if ($status !== 'active') {
            $html .= '<p>The IP can be changed while the licence is active.</p>';
        } elseif ($left !== null && (int) $left <= 0) {
            $html .= '<p data-ip-changes-left="0">This licence has no IP changes left. Contact support if your server has moved.</p>';
        } else {
            self::registerRoutes();
            $action = route(self::CHANGE_IP_ROUTE, ['service' => $service->id]);
            $html .= '<form method="POST" action="' . $e($action) . '" class="flex flex-col gap-2 max-w-md">'
                . '<input type="hidden" name="_token" value="' . $e(csrf_token()) . '">'
                . '<label for="license-bridge-new-ip">New IP address</label>'
                . '<input id="license-bridge-new-ip" name="new_ip" type="text" required maxlength="45" placeholder="203.0.113.10" class="bg-background-secondary border border-neutral rounded-md px-2 py-1">'
                . '<button type="submit" class="bg-primary text-white rounded-md px-3 py-1 w-fit">Change IP</button>'
                . '<p class="text-sm">' . ($left === null ? 'IP changes are not limited for this licence.' : $e($left) . ' IP change' . ((int) $left === 1 ? '' : 's') . ' left.') . '</p>'
                . '</form>';
        }
        return $html . '</div>';
    }

    /**
     * POST /extensions/licensebridge/services/{service}/change-ip (routes.php; web + auth): the
     * form of the Licence tab. Answers with a redirect to the service page and a notification
     * (the session "notification" key that Paymenter's Livewire components show).
     */
    public function changeIpFromClientArea(Request $request, Service $service)
    {
        $user = $request->user();
        $server = $service->product?->server;
        if (!$user || (string) $service->user_id !== (string) $user->id || !$server || $server->extension !== class_basename(static::class)) {
            abort(404);
        }
        try {
            if ($service->status !== 'active') {
                throw new DisplayException('The IP can be changed while the service is active.');
            }
            $extension = new static(ExtensionHelper::settingsToArray($server->settings));
            $message = $extension->changeIp(
                $service,
                ExtensionHelper::settingsToArray($service->product->settings),
                ExtensionHelper::getServiceProperties($service),
                (string) $request->input('new_ip', '')
            );
            $notification = ['message' => $message, 'type' => 'success'];
        } catch (DisplayException $e) {
            $notification = ['message' => $e->getMessage(), 'type' => 'error'];
        } catch (Throwable $e) {
            report($e);
            $notification = ['message' => 'The IP change could not be made right now. Please try again later or contact support.', 'type' => 'error'];
        }
        Session::put('notification', $notification);
        return redirect()->route('services.show', ['service' => $service->id, 'tab' => 'license']);
    }

    /**
     * Moves the licence to $newIp within the product's max_ip_changes. Returns the message for
     * the customer; throws DisplayException (Paymenter shows its message) when refused.
     */
    public function changeIp(Service $service, $settings, $properties, string $newIp): string
    {
        $properties = (array) $properties;
        $newIp = trim($newIp);
        $problem = $this->ipProblem($newIp);
        if ($problem !== null) {
            throw new DisplayException("That IP address cannot hold a licence: it {$problem}.");
        }
        $r = $this->client(self::INTERACTIVE_TIMEOUT)->changeIp($this->target($service, $properties) + ['new_ip' => $newIp]);
        unset(self::$infoCache[(string) $service->id]);
        if ($r['ok']) {
            $ip = (string) ($r['data']['ip'] ?? $newIp);
            $this->remember($service, self::IP_PROPERTY, 'Server IP address', $ip);
            $left = $r['data']['ip_changes_left'] ?? null;
            return "The licence now belongs to {$ip}." . ($left === null ? '' : " IP changes left: {$left}.");
        }
        if ($r['pending']) {
            return 'The IP change is accepted and being applied; this page shows the new IP once it is done.';
        }
        $detail = self::fieldErrors($r, 'new_ip');
        switch ($r['code']) {
            case 'ip_change_limit':
                throw new DisplayException('This licence has no IP changes left. Contact support if your server has moved.');
            case 'ip_in_use':
                // The bridge names the other service: not for a customer's eyes.
                throw new DisplayException('That IP address already has a licence of this kind.');
            case 'ip_unusable':
            case 'validation':
                if ($detail !== '') {
                    throw new DisplayException("That IP address cannot hold a licence: {$detail}.");
                }
                break;
            case 'service_terminated':
                throw new DisplayException('This licence has been terminated.');
        }
        Log::warning("license-bridge: change-ip of service #{$service->id} failed: " . $r['error'] . ' (' . $r['code'] . ')');
        throw new DisplayException('The IP change could not be made right now. Please try again later or contact support.');
    }

    // ------------------------------------------------------------------ helpers

    /** The bridge's base URL from the settings, or null when it is not an http(s) URL. */
    private function bridgeUrl(): ?string
    {
        $url = rtrim(trim((string) $this->config('bridge_url')), '/');
        $url = (string) preg_replace('~/provision/v1$~', '', $url);
        return preg_match('~^https?://[^/\s]+~i', $url) ? $url : null;
    }

    private function client(?int $timeoutCap = null): \LicenseBridgeClient
    {
        $url = $this->bridgeUrl();
        if ($url === null) {
            throw new Exception('license-bridge: the server setting "Bridge URL" must start with http:// or https://');
        }
        $timeout = (int) ($this->config('timeout') ?: 30);
        $timeout = max(5, min(110, $timeout));
        if ($timeoutCap !== null) {
            $timeout = min($timeout, $timeoutCap);
        }
        return new \LicenseBridgeClient($url, (string) $this->config('token'), $timeout, self::logger(), 'paymenter');
    }

    /** Each call into Laravel's log, without the token (the client removes it before this sees it). */
    private static function logger(): callable
    {
        return static function (string $action, array $request, array $response): void {
            $status = (int) ($response['status'] ?? 0);
            $context = ['request' => $request, 'response' => $response];
            if ($status === 200) {
                Log::debug("license-bridge: {$action} answered HTTP 200", $context);
            } else {
                Log::warning("license-bridge: {$action} answered HTTP {$status}", $context);
            }
        };
    }

    /** The licence's name for the bridge: its key once known, else the Paymenter service id. */
    private function target(Service $service, array $properties): array
    {
        $key = trim((string) ($properties[self::KEY_PROPERTY] ?? ''));
        return $key !== '' ? ['license_key' => $key] : ['service_identifier' => (string) $service->id];
    }

    /** The licence of the service, fetched at most once per request. */
    private function licence(Service $service, array $properties): array
    {
        $id = (string) $service->id;
        $hit = self::$infoCache[$id] ?? null;
        if ($hit !== null && $hit['at'] > microtime(true) - 5) {
            return $hit['r'];
        }
        $r = $this->client(self::INTERACTIVE_TIMEOUT)->info($this->target($service, $properties));
        if (!$r['ok'] && $r['code'] === 'unknown_service' && isset($properties[self::KEY_PROPERTY])) {
            // A stale key (edited by hand): the service id still names the licence.
            $r = $this->client(self::INTERACTIVE_TIMEOUT)->info(['service_identifier' => $id]);
        }
        self::$infoCache[$id] = ['at' => microtime(true), 'r' => $r];
        return $r;
    }

    private function bridgeProduct(array $settings): string
    {
        $product = trim((string) ($settings['bridge_product_id'] ?? ''));
        if ($product === '') {
            throw new Exception('license-bridge: the product has no "Bridge product id" (product settings)');
        }
        return $product;
    }

    /** The bridge's billing cycle from the service's plan (the shared rule); a licence is billed in whole terms. */
    private function billingCycle(Service $service): string
    {
        $plan = $service->plan;
        if (!$plan) {
            throw new Exception("license-bridge: service #{$service->id} has no plan");
        }
        $period = (int) $plan->billing_period;
        $months = match ((string) $plan->billing_unit) {
            'month' => $period,
            'year' => 12 * $period,
            default => 0,
        };
        $cycle = $months > 0 ? \LicenseBridgeRules::cycle($months) : false;
        if ($plan->type !== 'recurring' || !is_string($cycle)) {
            $what = $plan->type !== 'recurring' ? "a {$plan->type} plan" : "a plan billed every {$period} {$plan->billing_unit}(s)";
            throw new Exception("license-bridge: service #{$service->id} is on {$what}; a licence needs a recurring plan of 1, 3, 6, 12, 24 or 36 months (or 1, 2, 3 years)");
        }
        return $cycle;
    }

    /** The service's expiry (paid up to), as an ISO 8601 date; null while it has none. */
    private function paidUntil(Service $service): ?string
    {
        $expires = $service->expires_at;
        if ($expires instanceof \DateTimeInterface) {
            return $expires->format('Y-m-d\TH:i:sP');
        }
        if (is_string($expires) && trim($expires) !== '' && ($t = strtotime($expires)) !== false) {
            return gmdate('Y-m-d\TH:i:s\Z', $t);
        }
        return null;
    }

    /**
     * Why an IP cannot hold a licence, or null: the shared syntax rule (LicenseBridgeRules::ip),
     * then the ranges the bridge refuses, checked here only so that a customer can correct the
     * address at checkout or in the form rather than after paying. The bridge checks again and
     * decides (422 ip_unusable); keep "Allow private IPs" equal to its ALLOW_PRIVATE_IPS.
     */
    private function ipProblem(string $ip): ?string
    {
        if (trim($ip) === '') {
            return 'is required';
        }
        $ip = \LicenseBridgeRules::ip($ip);
        if ($ip === null) {
            return 'must be an IPv4 or IPv6 address';
        }
        if (filter_var($ip, FILTER_VALIDATE_IP, FILTER_FLAG_NO_RES_RANGE) === false) {
            return 'is a reserved address (loopback, link-local, unspecified)';
        }
        $packed = inet_pton($ip);
        $first = $packed === false ? 0 : ord($packed[0]);
        if ((strlen((string) $packed) === 4 && $first >= 224) || (strlen((string) $packed) === 16 && $first === 0xff)) {
            return 'is a multicast or broadcast address';
        }
        $allowPrivate = filter_var($this->config('allow_private_ips'), FILTER_VALIDATE_BOOLEAN);
        // PHP's private ranges lack the shared 100.64.0.0/10, which the bridge counts as private too.
        $shared = strlen((string) $packed) === 4 && $first === 100 && (ord($packed[1]) & 0xc0) === 64;
        if (!$allowPrivate && ($shared || filter_var($ip, FILTER_VALIDATE_IP, FILTER_FLAG_NO_PRIV_RANGE) === false)) {
            return 'is a private address';
        }
        return null;
    }

    /** Stores a value on the service, as Paymenter's own server extensions do. */
    private function remember(Service $service, string $key, string $name, string $value): void
    {
        $service->properties()->updateOrCreate(['key' => $key], ['name' => $name, 'value' => $value]);
    }

    /**
     * A failed call as the exception Paymenter records (never the token: the client leaves it out):
     * the bridge's error, its code and what to do, in the words every module shares
     * (LicenseBridgeMessages, generated from the bridge's own list), naming Paymenter's action.
     */
    private function failure(string $what, Service $service, array $r, string $call): Exception
    {
        return new Exception("license-bridge could not {$what} service #{$service->id} (HTTP {$r['status']}): "
            . \LicenseBridgeMessages::failure($r, self::ACTIONS[$call] ?? $call));
    }

    /** The bridge's messages for one parameter of a 422, joined. */
    private static function fieldErrors(array $r, string $param): string
    {
        $messages = $r['data']['errors'][$param] ?? [];
        return implode('; ', array_map('strval', is_array($messages) ? $messages : [$messages]));
    }

    /** suspend, unsuspend, terminate. A licence that was never bought has nothing to suspend or end. */
    private function statusCall(string $call, Service $service, array $properties): bool
    {
        $r = $this->client()->call($call, $this->target($service, $properties));
        if ($r['ok']) {
            return true;
        }
        if ($r['code'] === 'unknown_service' && $call !== 'unsuspend' && empty($properties[self::KEY_PROPERTY])) {
            Log::info("license-bridge: {$call} of service #{$service->id}: the bridge has no licence for it, nothing to do");
            return true;
        }
        if ($r['pending']) {
            throw new Exception("license-bridge, service #{$service->id}: " . \LicenseBridgeMessages::pending(self::ACTIONS[$call] ?? $call, (string) $r['error']));
        }
        throw $this->failure($call, $service, $r, $call);
    }
}
