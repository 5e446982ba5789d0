<?php
/**
 * License Bridge: a WHMCS addon module that forwards service actions to a license-bridge
 * service as signed webhooks (Standard Webhooks), with a local retry table.
 *
 * Install: copy modules/addons/license_bridge/ into WHMCS, then Setup (System Settings) >
 * Addon Modules > License Bridge > Activate, and Configure the fields below.
 */

if (!defined('WHMCS')) {
    die('This file cannot be accessed directly');
}

require_once __DIR__ . '/lib/bootstrap.php';

use LicenseBridge\Bridge;
use LicenseBridge\Queue;

function license_bridge_config(): array
{
    return [
        'name' => 'License Bridge',
        'description' => 'Sends service creations, suspensions, renewals, package and IP changes to license-bridge, which buys and manages the software licences upstream.',
        'version' => '1.0.0',
        'author' => 'license-bridge',
        'language' => 'english',
        'fields' => [
            'bridge_url' => [
                'FriendlyName' => 'Bridge URL',
                'Type' => 'text',
                'Size' => '60',
                'Default' => '',
                'Description' => 'Base URL of license-bridge, e.g. https://licenses.example.com (/webhooks/billing is added)',
            ],
            'signing_secret' => [
                'FriendlyName' => 'Signing secret',
                'Type' => 'password',
                'Size' => '60',
                'Default' => '',
                'Description' => 'whsec_... : one of the bridge\'s WEBHOOK_SECRETS',
            ],
            'product_ids' => [
                'FriendlyName' => 'Products to forward',
                'Type' => 'text',
                'Size' => '60',
                'Default' => '',
                'Description' => 'Comma-separated WHMCS product ids (tblproducts.id); empty forwards every product',
            ],
            'timeout' => [
                'FriendlyName' => 'Request timeout',
                'Type' => 'text',
                'Size' => '4',
                'Default' => '5',
                'Description' => 'Seconds (1 to 30) to wait for the bridge; a slower answer is retried by the cron',
            ],
        ],
    ];
}

function license_bridge_activate(): array
{
    try {
        lb_install_schema();
        return ['status' => 'success', 'description' => 'License Bridge is active: set the bridge URL and signing secret under Configure, then use Addons > License Bridge > Send test event.'];
    } catch (\Throwable $e) {
        return ['status' => 'error', 'description' => 'Could not create the module tables: ' . lb_scrub($e->getMessage())];
    }
}

/**
 * The tables stay: the retry table may hold undelivered events, and the state table keeps
 * webhook-ids from repeating if the module is activated again. Drop mod_license_bridge_queue
 * and mod_license_bridge_state by hand to remove every trace.
 */
function license_bridge_deactivate(): array
{
    return ['status' => 'success', 'description' => 'License Bridge is deactivated. Its tables (mod_license_bridge_queue, mod_license_bridge_state) were kept; drop them by hand if you are removing it for good.'];
}

function license_bridge_output($vars): void
{
    $h = function ($s): string {
        return htmlspecialchars((string) $s, ENT_QUOTES, 'UTF-8');
    };
    $link = $h($vars['modulelink'] ?? 'addonmodules.php?module=license_bridge');
    $token = function_exists('generate_token') ? generate_token('form') : '';
    $button = function (string $action, string $label, string $extra = '') use ($link, $token, $h): string {
        return '<form method="post" action="' . $link . '" style="display:inline">' . $token
            . '<input type="hidden" name="lb_action" value="' . $h($action) . '">' . $extra
            . '<button type="submit" class="btn btn-default btn-sm">' . $h($label) . '</button></form> ';
    };

    try {
        $action = ($_SERVER['REQUEST_METHOD'] ?? 'GET') === 'POST' ? (string) ($_POST['lb_action'] ?? '') : '';
        if ($action !== '' && function_exists('check_token')) {
            check_token('WHMCS.admin.default');
        }
        $queue = lb_queue();
        if ($action === 'test') {
            $r = Bridge::sendTest();
            echo '<div class="alert alert-' . ($r['ok'] ? 'success' : 'danger') . '"><strong>Test event ' . $h($r['webhook_id']) . ':</strong> '
                . ($r['status'] ? 'HTTP ' . $h($r['status']) . '. ' : '') . $h($r['verdict'])
                . ($r['response'] !== '' ? '<pre style="margin-top:8px;white-space:pre-wrap">' . $h($r['response']) . '</pre>' : '') . '</div>';
        } elseif ($action === 'deliver') {
            $results = Bridge::deliver(null, 200, time() + 30);
            $ok = count(array_filter($results, function ($r) {
                return $r['row_status'] === 'deleted';
            }));
            echo '<div class="alert alert-info">Tried ' . count($results) . ' queued event(s); ' . $ok . ' delivered.</div>';
        } elseif ($action === 'requeue') {
            $id = isset($_POST['id']) ? (int) $_POST['id'] : null;
            echo '<div class="alert alert-info">' . $queue->requeue($id) . ' event(s) put back in the queue; the next cron run (or "Deliver queued events now") sends them.</div>';
        } elseif ($action === 'discard' && isset($_POST['id'])) {
            $row = $queue->rows(Queue::FAILED, null, 10000);
            foreach ($row as $r) {
                if ((int) $r['id'] === (int) $_POST['id']) {
                    $queue->delete((int) $r['id']);
                    echo '<div class="alert alert-info">Discarded ' . $h($r['webhook_id']) . '.</div>';
                }
            }
        }

        $settings = lb_settings();
        echo '<p>Bridge: <code>' . $h($settings['bridge_url'] !== '' ? $settings['bridge_url'] : '(not set)') . '</code>; signing secret '
            . ($settings['signing_secret'] !== '' ? 'set' : '<strong>not set</strong>') . '; products: '
            . $h($settings['product_ids'] ? implode(', ', $settings['product_ids']) : 'all') . '.</p>';
        echo '<p>' . $button('test', 'Send test event') . $button('deliver', 'Deliver queued events now') . '</p>';
        echo '<p class="text-muted">The test event is a signed service.created for the service "whmcs-test-&lt;time&gt;" with a product the bridge does not know: a bridge that checks the signature answers 422 and buys nothing.</p>';

        foreach ([Queue::PENDING => 'Queued (not yet delivered)', Queue::FAILED => 'Given up (the bridge refused them, or too many attempts)'] as $status => $title) {
            $rows = $queue->rows($status, null, 200);
            echo '<h3>' . $h($title) . ' (' . $queue->count($status) . ')</h3>';
            if (!$rows) {
                echo '<p>None.</p>';
                continue;
            }
            if ($status === Queue::FAILED) {
                echo '<p>' . $button('requeue', 'Requeue all given-up events') . '</p>';
            }
            echo '<table class="table table-condensed table-striped"><tr><th>#</th><th>Queued</th><th>Service</th><th>Event</th><th>Webhook id</th><th>Attempts</th><th>Last answer</th><th></th></tr>';
            foreach ($rows as $r) {
                $idField = '<input type="hidden" name="id" value="' . (int) $r['id'] . '">';
                echo '<tr><td>' . (int) $r['id'] . '</td><td>' . $h(date('Y-m-d H:i:s', (int) $r['created_at'])) . '</td>'
                    . '<td><a href="clientsservices.php?id=' . rawurlencode($r['service_id']) . '">' . $h($r['service_id']) . '</a></td>'
                    . '<td>' . $h($r['event_type']) . '</td><td><code>' . $h($r['webhook_id']) . '</code></td><td>' . (int) $r['attempts'] . '</td>'
                    . '<td>' . $h(($r['last_status'] ? 'HTTP ' . $r['last_status'] . ' ' : '') . lb_scrub((string) $r['last_error'])) . '</td><td>'
                    . ($status === Queue::FAILED ? $button('requeue', 'Requeue', $idField) . $button('discard', 'Discard', $idField) : '')
                    . '</td></tr>';
            }
            echo '</table>';
        }
    } catch (\Throwable $e) {
        lb_report_exception('admin page', $e);
        echo '<div class="alert alert-danger">License Bridge: ' . $h(lb_scrub($e->getMessage())) . '</div>';
    }
}
