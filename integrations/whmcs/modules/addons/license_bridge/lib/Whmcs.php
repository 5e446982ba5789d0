<?php
/**
 * Every call into WHMCS goes through this file. Each function is defined only if it does not
 * exist yet, so the tests (tests/whmcs-stub.php) load their stand-ins first and the rest of the
 * module runs unchanged on top of them.
 *
 * WHMCS tables and fields assumed: tbladdonmodules (module, setting, value); tblhosting (id,
 * userid, orderid, packageid, billingcycle, nextduedate, dedicatedip, domainstatus); tblclients
 * (id, firstname, lastname, companyname, email); tblinvoiceitems (invoiceid, type, relid);
 * tblorders (id, invoiceid).
 */

use Illuminate\Database\Capsule\Manager as Capsule;
use LicenseBridge\Queue;

if (!defined('WHMCS')) {
    die('This file cannot be accessed directly');
}

const LB_MODULE = 'license_bridge';

if (!function_exists('lb_module_setting')) {
    /** One of the addon's settings (Setup > Addon Modules > License Bridge > Configure), raw. */
    function lb_module_setting(string $name): ?string
    {
        $value = Capsule::table('tbladdonmodules')->where('module', LB_MODULE)->where('setting', $name)->value('value');
        return $value === null ? null : (string) $value;
    }
}

if (!function_exists('lb_service_lookup')) {
    /**
     * A service as the database has it now, or null:
     * [serviceid, pid, billingcycle, nextduedate, dedicatedip, status, userid, orderid, email, firstname, lastname, companyname].
     */
    function lb_service_lookup(string $serviceId): ?array
    {
        $row = Capsule::table('tblhosting')
            ->leftJoin('tblclients', 'tblclients.id', '=', 'tblhosting.userid')
            ->where('tblhosting.id', (int) $serviceId)
            ->first([
                'tblhosting.id as serviceid', 'tblhosting.packageid as pid', 'tblhosting.billingcycle',
                'tblhosting.nextduedate', 'tblhosting.dedicatedip', 'tblhosting.domainstatus as status',
                'tblhosting.userid', 'tblhosting.orderid', 'tblclients.email', 'tblclients.firstname',
                'tblclients.lastname', 'tblclients.companyname',
            ]);
        return $row ? (array) $row : null;
    }
}

if (!function_exists('lb_invoice_service_ids')) {
    /**
     * Services an invoice renews: its "Hosting" items, except the services whose order this
     * invoice is (their first payment is the purchase itself, forwarded by AfterModuleCreate).
     *
     * @return string[]
     */
    function lb_invoice_service_ids(string $invoiceId): array
    {
        $ids = Capsule::table('tblinvoiceitems')
            ->join('tblhosting', 'tblhosting.id', '=', 'tblinvoiceitems.relid')
            ->leftJoin('tblorders', 'tblorders.id', '=', 'tblhosting.orderid')
            ->where('tblinvoiceitems.invoiceid', (int) $invoiceId)
            ->where('tblinvoiceitems.type', 'Hosting')
            ->where(function ($q) use ($invoiceId) {
                $q->whereNull('tblorders.invoiceid')->orWhere('tblorders.invoiceid', '!=', (int) $invoiceId);
            })
            ->pluck('tblinvoiceitems.relid');
        $out = [];
        foreach ($ids as $id) {
            $out[(string) $id] = true;
        }
        return array_keys($out);
    }
}

if (!function_exists('lb_db')) {
    /** The PDO the queue lives on: WHMCS's own database connection. */
    function lb_db(): \PDO
    {
        return Capsule::connection()->getPdo();
    }
}

if (!function_exists('lb_log_call')) {
    /** The module log (Utilities > Logs > Module Log; recorded while module debug logging is on). */
    function lb_log_call(string $action, $request, $response, $processed, array $replace): void
    {
        if (function_exists('logModuleCall')) {
            logModuleCall(LB_MODULE, $action, $request, $response, $processed, $replace);
        }
    }
}

if (!function_exists('lb_activity_log')) {
    /** The activity log (always recorded): for what an administrator must see. */
    function lb_activity_log(string $message): void
    {
        if (function_exists('logActivity')) {
            logActivity(lb_scrub('License Bridge: ' . $message));
        }
    }
}

if (!function_exists('lb_install_schema')) {
    /** Creates the module's two tables if missing: with the Capsule schema builder in WHMCS, plain DDL elsewhere. */
    function lb_install_schema(): void
    {
        if (class_exists(Capsule::class)) {
            $schema = Capsule::schema();
            if (!$schema->hasTable(Queue::TABLE)) {
                $schema->create(Queue::TABLE, function ($table) {
                    $table->increments('id');
                    $table->string('webhook_id', 191)->unique();
                    $table->string('service_id', 64);
                    $table->string('event_type', 40);
                    $table->text('payload');
                    $table->string('status', 16)->default(Queue::PENDING);
                    $table->integer('attempts')->default(0);
                    $table->integer('last_status')->nullable();
                    $table->string('last_error', 255)->nullable();
                    $table->integer('created_at');
                    $table->integer('updated_at');
                    $table->index(['service_id', 'id'], 'mod_license_bridge_queue_service');
                });
            }
            if (!$schema->hasTable(Queue::STATE_TABLE)) {
                $schema->create(Queue::STATE_TABLE, function ($table) {
                    $table->string('service_id', 64)->primary();
                    $table->string('ip', 64)->nullable();
                    $table->string('pid', 32)->nullable();
                    $table->string('status', 16)->nullable();
                    $table->integer('status_seq')->default(0);
                    $table->integer('pid_seq')->default(0);
                    $table->integer('ip_seq')->default(0);
                    $table->integer('updated_at');
                });
            }
            return;
        }
        $pdo = lb_db();
        foreach (Queue::createTablesSql((string) $pdo->getAttribute(\PDO::ATTR_DRIVER_NAME)) as $sql) {
            $pdo->exec($sql);
        }
    }
}

/** The queue on lb_db(), its tables created on first use. */
function lb_queue(): Queue
{
    static $queue = null;
    if ($queue === null) {
        lb_install_schema();
        $queue = new Queue(lb_db(), (int) (lb_settings()['max_attempts']));
    }
    return $queue;
}

/**
 * The addon's settings, normalised.
 *
 * @return array{bridge_url:string, signing_secret:string, product_ids:string[], timeout:int, max_attempts:int}
 */
function lb_settings(): array
{
    static $cache = null; // one read per PHP request
    if ($cache !== null) {
        return $cache;
    }
    $secret = trim((string) lb_module_setting('signing_secret'));
    // Password fields may be stored encrypted; WHMCS's decrypt() gives the plain value back.
    if ($secret !== '' && strncmp($secret, 'whsec_', 6) !== 0 && function_exists('decrypt')) {
        $plain = decrypt($secret);
        if (is_string($plain) && strncmp(trim($plain), 'whsec_', 6) === 0) {
            $secret = trim($plain);
        }
    }
    $timeout = (int) (lb_module_setting('timeout') ?: 5);
    return $cache = [
        'bridge_url' => trim((string) lb_module_setting('bridge_url')),
        'signing_secret' => $secret,
        'product_ids' => \LicenseBridge\EventBuilder::productList(lb_module_setting('product_ids')),
        'timeout' => $timeout >= 1 && $timeout <= 30 ? $timeout : 5,
        'max_attempts' => 2000, // about a week of 5-minute cron runs
    ];
}

/**
 * Removes what must never reach a log: the signing secret (whole, its base64 part and its raw
 * key), signature values and the webhook-signature header.
 */
function lb_scrub(string $text, array $secrets = []): string
{
    $secrets = array_merge($secrets, lb_secret_forms());
    foreach ($secrets as $s) {
        if (is_string($s) && strlen($s) >= 6) {
            $text = str_replace($s, '***', $text);
        }
    }
    $text = (string) preg_replace('/(webhook-signature"?\s*[:=]>?\s*"?)[^"\r\n]*/i', '$1***', $text);
    $text = (string) preg_replace('#\bv1,[A-Za-z0-9+/=]{20,}#', 'v1,***', $text);
    return (string) preg_replace('#\bwhsec_[A-Za-z0-9+/=]+#', 'whsec_***', $text);
}

/** The configured secret in every form it could leak in. */
function lb_secret_forms(): array
{
    static $cache = null;
    if ($cache !== null) {
        return $cache;
    }
    $forms = [];
    try {
        $secret = lb_settings()['signing_secret'];
        if ($secret !== '') {
            $b64 = strncmp($secret, 'whsec_', 6) === 0 ? substr($secret, 6) : $secret;
            $forms = [$secret, $b64];
            $raw = base64_decode($b64, true);
            if (is_string($raw) && strlen($raw) >= 6) {
                $forms[] = $raw;
            }
        }
    } catch (\Throwable $e) {
        // no settings, nothing to hide
    }
    return $cache = $forms;
}

/** A module-log entry, every part scrubbed; WHMCS also masks the secrets passed as replace vars. */
function lb_module_log(string $action, $request, $response, string $processed = ''): void
{
    $clean = function ($v) use (&$clean) {
        if (is_array($v)) {
            return array_map($clean, $v);
        }
        return is_string($v) ? lb_scrub($v) : $v;
    };
    lb_log_call($action, $clean($request), $clean($response), lb_scrub($processed), lb_secret_forms());
}

/** A hook that failed: the module log and the activity log, scrubbed. WHMCS itself carries on. */
function lb_report_exception(string $hook, \Throwable $e): void
{
    $msg = get_class($e) . ': ' . $e->getMessage();
    lb_module_log($hook . ': error', ['hook' => $hook], $msg, $e->getFile() . ':' . $e->getLine());
    lb_activity_log("$hook failed ($msg); the WHMCS action itself went through");
}
