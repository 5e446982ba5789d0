<?php
/**
 * license-bridge: a SAMPLE WHMCS hook file that reports licence services to the bridge's signed
 * webhook, POST /webhooks/billing. It is the alternative to the licensebridge server module, for
 * licence products that must stay on another module (e.g. WHMCS's own "Auto Release"). Use the
 * module when you can: only the module makes WHMCS's Create fail when the purchase fails; a hook
 * runs after WHMCS has already marked the service Active. Never use both for one product (this
 * file skips any service whose module is licensebridge).
 *
 * Install (integrations/whmcs/README.md, "The webhook alternative"):
 *  1. copy it to <WHMCS root>/includes/hooks/ (WHMCS loads every .php file there; a name starting
 *     with "_" is skipped, so rename it to _licensebridge_webhook_sample.php to switch it off);
 *  2. set the three settings below, here or as constants in WHMCS's configuration.php.
 *
 * What it sends (the bridge's event types; README "Webhook body" and its openapi document):
 *   AfterModuleCreate        -> service.created  (product, cycle, IP, the client's e-mail and name)
 *   AfterModuleSuspend       -> service.suspended
 *   AfterModuleUnsuspend     -> service.unsuspended
 *   AfterModuleTerminate     -> service.terminated
 *   AfterModuleChangePackage -> service.product_changed (the new product)
 *   PreServiceEdit + ServiceEdit, the IP changed -> service.ip_changed
 *   InvoicePaid, per service on the invoice     -> service.renewed (up to the service's next due date)
 * Hook points and their variables: developers.whmcs.com, Hooks Reference ("Module", "Service",
 * "Invoices and Quotes"); the service's data comes from WHMCS's internal API (localAPI
 * GetClientsProducts, GetInvoice). Signature: Standard Webhooks (standardwebhooks.com):
 * webhook-id, webhook-timestamp, webhook-signature = "v1," + base64(HMAC-SHA256(key,
 * "<id>.<timestamp>.<body>")), the key being the base64 after "whsec_".
 *
 * A hook cannot retry: a delivery that fails is written to WHMCS's Activity Log with the bridge's
 * answer, and the bridge changes nothing. Send it again with `npx license-bridge trigger`, or
 * redo the action in WHMCS. Plain PHP with curl and json; no Composer. Not run inside a real
 * WHMCS: tested with php-cli against a running bridge (test/integrations/whmcs.test.ts).
 */

if (!defined('WHMCS')) {
    die('This file cannot be accessed directly');
}

// ---- settings ------------------------------------------------------------------------------
// The bridge's webhook URL, e.g. https://licenses.example.com/webhooks/billing
defined('LICENSEBRIDGE_WEBHOOK_URL') or define('LICENSEBRIDGE_WEBHOOK_URL', '');
// One of the bridge's WEBHOOK_SECRETS ("whsec_" and base64).
defined('LICENSEBRIDGE_WEBHOOK_SECRET') or define('LICENSEBRIDGE_WEBHOOK_SECRET', '');
// The WHMCS product ids of your licence products, comma-separated, e.g. '12,13,20': the keys of
// the bridge's config/products.json. Nothing else is reported (empty: nothing at all).
defined('LICENSEBRIDGE_WEBHOOK_PRODUCTS') or define('LICENSEBRIDGE_WEBHOOK_PRODUCTS', '');
// The custom field that holds the licence IP when the service has no Dedicated IP.
defined('LICENSEBRIDGE_WEBHOOK_IP_FIELD') or define('LICENSEBRIDGE_WEBHOOK_IP_FIELD', 'IP Address');

// ---- hooks ---------------------------------------------------------------------------------

foreach ([
    'AfterModuleCreate' => 'service.created',
    'AfterModuleSuspend' => 'service.suspended',
    'AfterModuleUnsuspend' => 'service.unsuspended',
    'AfterModuleTerminate' => 'service.terminated',
    'AfterModuleChangePackage' => 'service.product_changed',
] as $licensebridgeHook => $licensebridgeType) {
    add_hook($licensebridgeHook, 1, function ($vars) use ($licensebridgeType) {
        $params = is_array($vars['params'] ?? null) ? $vars['params'] : [];
        // The server module reports its own services; product addons are not covered by this sample.
        if (($params['moduletype'] ?? '') === 'licensebridge' || !empty($params['addonId'])) {
            return;
        }
        $id = (int) ($params['serviceid'] ?? 0);
        $service = licensebridge_webhook_service($id);
        if ($service === null) {
            return;
        }
        $event = ['type' => $licensebridgeType, 'service' => ['id' => (string) $id]];
        if ($licensebridgeType === 'service.created') {
            $client = is_array($params['clientsdetails'] ?? null) ? $params['clientsdetails'] : [];
            $name = trim((string) ($client['fullname'] ?? (($client['firstname'] ?? '') . ' ' . ($client['lastname'] ?? ''))));
            // A missing field is left out: the bridge answers 422 naming it, and the Activity Log shows that.
            $event['service'] += array_filter([
                'product_id' => (string) $service['pid'],
                'billing_cycle' => licensebridge_webhook_cycle((string) ($service['billingcycle'] ?? '')),
                'ip' => licensebridge_webhook_ip($service),
                'customer' => array_filter(['email' => trim((string) ($client['email'] ?? '')), 'name' => licensebridge_webhook_text($name, 200)]),
            ]);
        } elseif ($licensebridgeType === 'service.product_changed') {
            // WHMCS has already moved the service to the new product.
            $event['changes'] = ['product_id' => (string) $service['pid']];
        }
        licensebridge_webhook_send($event, 'msg_' . bin2hex(random_bytes(12)), (int) ($service['clientid'] ?? 0));
    });
}

/** The IP before an admin saves the service, by service id (the same request runs ServiceEdit). */
$GLOBALS['licensebridge_webhook_ip_before'] = [];

add_hook('PreServiceEdit', 1, function ($vars) {
    $id = (int) ($vars['serviceid'] ?? 0);
    $service = licensebridge_webhook_service($id);
    if ($service !== null) {
        $GLOBALS['licensebridge_webhook_ip_before'][$id] = licensebridge_webhook_ip($service);
    }
});

add_hook('ServiceEdit', 1, function ($vars) {
    $id = (int) ($vars['serviceid'] ?? 0);
    if (!array_key_exists($id, $GLOBALS['licensebridge_webhook_ip_before'])) {
        return;
    }
    $before = $GLOBALS['licensebridge_webhook_ip_before'][$id];
    unset($GLOBALS['licensebridge_webhook_ip_before'][$id]);
    $service = licensebridge_webhook_service($id);
    $after = $service !== null ? licensebridge_webhook_ip($service) : null;
    if ($after === null || $after === $before) {
        return;
    }
    licensebridge_webhook_send(
        ['type' => 'service.ip_changed', 'service' => array_filter(['id' => (string) $id, 'ip' => $before]), 'changes' => ['ip' => $after]],
        'msg_' . bin2hex(random_bytes(12)),
        (int) ($service['clientid'] ?? 0)
    );
});

add_hook('InvoicePaid', 1, function ($vars) {
    $invoiceId = (int) ($vars['invoiceid'] ?? 0);
    $invoice = localAPI('GetInvoice', ['invoiceid' => $invoiceId]);
    $items = $invoice['items']['item'] ?? [];
    foreach (is_array($items) ? $items : [] as $item) {
        if (!is_array($item) || ($item['type'] ?? '') !== 'Hosting') {
            continue;
        }
        $id = (int) ($item['relid'] ?? 0);
        $service = licensebridge_webhook_service($id);
        if ($service === null) {
            continue;
        }
        $due = preg_match('/^\d{4}-\d{2}-\d{2}$/D', (string) ($service['nextduedate'] ?? '')) === 1 && $service['nextduedate'] !== '0000-00-00'
            ? $service['nextduedate'] : null;
        // One id per invoice and service: the same payment reported twice is one renewal.
        licensebridge_webhook_send(
            ['type' => 'service.renewed', 'service' => array_filter(['id' => (string) $id, 'next_due_date' => $due])],
            'whmcs-invoice-' . $invoiceId . '-service-' . $id,
            (int) ($service['clientid'] ?? 0)
        );
    }
});

// ---- helpers -------------------------------------------------------------------------------

/** The service (GetClientsProducts' fields) when it is one of the licence products, else null. */
function licensebridge_webhook_service(int $id): ?array
{
    if ($id <= 0) {
        return null;
    }
    $products = array_filter(array_map('trim', explode(',', (string) LICENSEBRIDGE_WEBHOOK_PRODUCTS)), 'strlen');
    if ($products === []) {
        return null;
    }
    $result = localAPI('GetClientsProducts', ['serviceid' => $id]);
    $service = $result['products']['product'][0] ?? null;
    if (!is_array($service) || !in_array((string) ($service['pid'] ?? ''), $products, true)) {
        return null;
    }
    return $service;
}

/** The licence IP: the Dedicated IP, else the custom field; null when neither holds an IP. */
function licensebridge_webhook_ip(array $service): ?string
{
    $candidates = [$service['dedicatedip'] ?? ''];
    foreach ((array) ($service['customfields']['customfield'] ?? []) as $field) {
        if (is_array($field) && ($field['name'] ?? '') === LICENSEBRIDGE_WEBHOOK_IP_FIELD) {
            $candidates[] = $field['value'] ?? '';
        }
    }
    foreach ($candidates as $value) {
        $value = is_scalar($value) ? trim((string) $value, " \t\n\r\0\x0B[]") : '';
        if ($value !== '' && filter_var($value, FILTER_VALIDATE_IP) !== false) {
            return $value;
        }
    }
    return null;
}

/** The bridge's word for WHMCS's billing cycle ("Semi-Annually" -> "semiannually"); null for others. */
function licensebridge_webhook_cycle(string $cycle): ?string
{
    $word = strtolower((string) preg_replace('/[^A-Za-z]+/', '', $cycle));
    return in_array($word, ['monthly', 'quarterly', 'semiannually', 'annually', 'biennially', 'triennially'], true) ? $word : null;
}

/** Printable text of at most $max bytes, whole characters (a name must never make the bridge refuse the order). */
function licensebridge_webhook_text(string $text, int $max): ?string
{
    if (preg_match('//u', $text) !== 1) {
        $text = (string) preg_replace('/[^\x20-\x7E]+/', ' ', $text);
    }
    $text = trim((string) preg_replace('/[\x{0}-\x{1F}\x{7F}-\x{9F}\x{2028}\x{2029}]+/u', ' ', $text));
    if (strlen($text) > $max) {
        $text = substr($text, 0, $max);
        while ($text !== '' && preg_match('//u', $text) !== 1) {
            $text = substr($text, 0, -1);
        }
        $text = rtrim($text);
    }
    return $text !== '' ? $text : null;
}

/** Signs and posts one event; every outcome that is not accepted goes to WHMCS's Activity Log. */
function licensebridge_webhook_send(array $event, string $id, int $clientId = 0): bool
{
    $url = trim((string) LICENSEBRIDGE_WEBHOOK_URL);
    $secret = trim((string) LICENSEBRIDGE_WEBHOOK_SECRET);
    $what = 'License Bridge webhook: ' . $event['type'] . ' for service #' . $event['service']['id'];
    if ($url === '' || strpos($secret, 'whsec_') !== 0) {
        logActivity($what . ' not sent: set LICENSEBRIDGE_WEBHOOK_URL and LICENSEBRIDGE_WEBHOOK_SECRET (whsec_...)', $clientId);
        return false;
    }
    $body = json_encode($event, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE);
    $timestamp = (string) time();
    $key = (string) base64_decode(substr($secret, 6), true);
    $signature = 'v1,' . base64_encode(hash_hmac('sha256', $id . '.' . $timestamp . '.' . $body, $key, true));

    $curl = curl_init($url);
    curl_setopt_array($curl, [
        CURLOPT_POST => true,
        CURLOPT_POSTFIELDS => $body,
        CURLOPT_RETURNTRANSFER => true,
        // A hook runs inside WHMCS's own request (the cron, an admin's click): never wait long.
        CURLOPT_CONNECTTIMEOUT => 5,
        CURLOPT_TIMEOUT => 10,
        CURLOPT_FOLLOWLOCATION => false,
        CURLOPT_HTTPHEADER => [
            'Content-Type: application/json',
            'webhook-id: ' . $id,
            'webhook-timestamp: ' . $timestamp,
            'webhook-signature: ' . $signature,
        ],
    ]);
    $answer = curl_exec($curl);
    $status = (int) curl_getinfo($curl, CURLINFO_RESPONSE_CODE);
    $error = $answer === false ? curl_error($curl) : '';
    curl_close($curl);

    // 202 accepted, 200 duplicate (already delivered): done.
    if ($status === 202 || $status === 200) {
        return true;
    }
    $detail = $answer === false ? 'not reached: ' . $error : 'HTTP ' . $status . ' ' . substr((string) $answer, 0, 500);
    logActivity($what . ' failed (webhook-id ' . $id . '): ' . $detail, $clientId);
    return false;
}
