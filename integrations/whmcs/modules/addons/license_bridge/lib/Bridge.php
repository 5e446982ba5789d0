<?php
/**
 * What each hook does: build the event, queue it, send what the service has queued (in order),
 * log what happened. The hooks in hooks.php wrap every call in try/catch.
 */

namespace LicenseBridge;

if (!defined('WHMCS')) {
    die('This file cannot be accessed directly');
}

final class Bridge
{
    /** What this PHP request did (for the admin page and the tests). */
    public static $trace = [];

    /** AfterModuleCreate/Suspend/Unsuspend/Terminate/Renew/ChangePackage: $vars['params'] holds the module parameters. */
    public static function onModuleAction(string $action, string $hook, array $vars): void
    {
        $params = is_array($vars['params'] ?? null) ? $vars['params'] : [];
        self::handle($action, $hook, EventBuilder::factsFromParams($params));
    }

    /** InvoicePaid: a renewal for each service the invoice pays (not the order's own first invoice). */
    public static function onInvoicePaid(array $vars): void
    {
        $invoiceId = (string) ($vars['invoiceid'] ?? '');
        if ($invoiceId === '') {
            return;
        }
        foreach (lb_invoice_service_ids($invoiceId) as $sid) {
            try {
                self::handle('renew', 'InvoicePaid', EventBuilder::factsFromLookup(['serviceid' => (string) $sid]));
            } catch (\Throwable $e) {
                lb_report_exception("InvoicePaid (invoice $invoiceId, service $sid)", $e);
            }
        }
    }

    /** AdminServiceEdit / ServiceEdit: $vars['serviceid']; forwards a changed dedicated IP. */
    public static function onServiceEdit(string $hook, array $vars): void
    {
        $sid = (string) ($vars['serviceid'] ?? '');
        if ($sid !== '') {
            self::handle('ipchange', $hook, EventBuilder::factsFromLookup(['serviceid' => $sid]));
        }
    }

    /** AfterCronJob: send everything queued, oldest first, for at most a minute. */
    public static function onCron(): array
    {
        $results = self::deliver(null, 200, time() + 60);
        self::$trace[] = ['hook' => 'AfterCronJob', 'deliveries' => $results];
        return $results;
    }

    /** DailyCronJob: a reminder in the activity log while given-up events wait for an administrator. */
    public static function onDailyCron(): void
    {
        $failed = lb_queue()->count(Queue::FAILED);
        if ($failed > 0) {
            lb_activity_log("$failed event(s) were given up and are not delivered; see Addons > License Bridge");
        }
    }

    public static function handle(string $action, string $hook, array $facts): void
    {
        $sid = $facts['serviceid'] ?? null;
        if ($sid !== null && EventBuilder::needsLookup($action, $facts)) {
            $row = lb_service_lookup($sid);
            $prefer = ['renew' => ['nextduedate'], 'ipchange' => ['ip', 'status']][$action] ?? [];
            $facts = EventBuilder::merge($facts, $row ? EventBuilder::factsFromLookup($row) : null, $prefer);
        }
        $settings = lb_settings();
        $queue = lb_queue();
        $state = $sid !== null ? $queue->state($sid) : null;
        $built = EventBuilder::build($action, $facts, $state, $settings['product_ids']);

        if ($built['event'] === null) {
            if ($built['state'] !== null && $sid !== null) {
                $queue->putState($sid, $built['state']);
            }
            if (!$built['quiet']) {
                lb_module_log("$hook: not forwarded", self::factsForLog($facts), $built['reason']);
            }
            self::$trace[] = ['hook' => $hook, 'action' => $action, 'service_id' => $sid, 'skipped' => $built['reason']];
            return;
        }

        $event = $built['event'];
        $body = EventBuilder::encode($event['body']);
        $queued = $queue->enqueue($event, $body);
        if ($built['state'] !== null) {
            $queue->putState($event['service_id'], $built['state']);
        }
        $deliveries = self::deliver($event['service_id'], 50, null);
        self::$trace[] = [
            'hook' => $hook,
            'action' => $action,
            'service_id' => $event['service_id'],
            'webhook_id' => $event['webhook_id'],
            'type' => $event['type'],
            'queued' => $queued,
            'deliveries' => $deliveries,
        ];
    }

    /**
     * Sends pending events (of one service, or all), each one logged.
     *
     * @return array[] Queue::drain()'s entries
     */
    public static function deliver(?string $serviceId, int $limit, ?int $until): array
    {
        $queue = lb_queue();
        $settings = lb_settings();
        try {
            $sender = new Sender($settings['bridge_url'], $settings['signing_secret'], $settings['timeout']);
        } catch (\InvalidArgumentException $e) {
            if ($queue->rows(Queue::PENDING, $serviceId, 1)) {
                lb_module_log('configuration', ['bridge_url' => $settings['bridge_url']], 'not sending: ' . $e->getMessage(), 'events stay queued');
                lb_activity_log('not configured (' . $e->getMessage() . '); events stay queued until it is');
            }
            return [];
        }
        $url = Sender::endpoint($settings['bridge_url']);
        $results = $queue->drain(function (array $row) use ($sender, $url, $queue) {
            $r = $sender->send($row['webhook_id'], $row['payload']);
            $request = "POST $url\nwebhook-id: {$row['webhook_id']}\nwebhook-signature: (hidden)\n\n{$row['payload']}";
            $answer = $r['error'] ?? ("HTTP {$r['status']}\n{$r['response']}");
            $attempt = (int) $row['attempts'] + 1;
            if ($r['outcome'] === Sender::DELIVERED) {
                $note = "delivered in {$r['duration_ms']} ms (attempt $attempt)";
            } elseif ($r['outcome'] === Sender::GIVE_UP) {
                $note = "given up: the bridge refused the event with HTTP {$r['status']}; it will not be sent again";
                lb_activity_log("gave up on {$row['event_type']} for service {$row['service_id']} ({$row['webhook_id']}): HTTP {$r['status']} " . EventBuilder::clip($r['response'], 300));
            } elseif ($attempt >= $queue->maxAttempts()) {
                $note = "given up after $attempt attempts";
                lb_activity_log("gave up on {$row['event_type']} for service {$row['service_id']} ({$row['webhook_id']}) after $attempt attempts: $answer");
            } else {
                $note = "not delivered (attempt $attempt); kept in the retry table for the next cron run";
            }
            lb_module_log('send ' . $row['event_type'], $request, $answer, $note);
            return $r;
        }, $serviceId, $limit, $until);
        return $results;
    }

    /** The admin page's "Send test event": signed, sent at once, not queued. */
    public static function sendTest(): array
    {
        $settings = lb_settings();
        $event = EventBuilder::testEvent(time());
        try {
            $sender = new Sender($settings['bridge_url'], $settings['signing_secret'], $settings['timeout']);
        } catch (\InvalidArgumentException $e) {
            return ['status' => 0, 'ok' => false, 'verdict' => 'Not configured: ' . $e->getMessage(), 'response' => '', 'webhook_id' => $event['webhook_id']];
        }
        $r = $sender->send($event['webhook_id'], EventBuilder::encode($event['body']));
        $status = $r['status'];
        if ($status === 0) {
            $verdict = 'Could not reach the bridge: ' . $r['error'];
        } elseif ($status === 422) {
            $verdict = 'OK: the bridge verified the signature and checked the event. (The test product is deliberately unknown, so it answers 422 and nothing was bought.)';
        } elseif ($status === 401) {
            $verdict = 'The bridge rejected the signature: check the signing secret (it must be one of the bridge\'s WEBHOOK_SECRETS) and this server\'s clock.';
        } elseif ($status === 404 || $status === 405) {
            $verdict = 'No webhook endpoint at this URL: check the bridge URL.';
        } elseif ($status >= 200 && $status < 300) {
            $verdict = 'The bridge accepted the test event.';
        } else {
            $verdict = "Unexpected answer HTTP $status.";
        }
        $ok = $status === 422 || ($status >= 200 && $status < 300);
        lb_module_log('send test event', EventBuilder::encode($event['body']), $r['error'] ?? "HTTP $status\n{$r['response']}", $verdict);
        return ['status' => $status, 'ok' => $ok, 'verdict' => $verdict, 'response' => lb_scrub($r['response']), 'webhook_id' => $event['webhook_id']];
    }

    private static function factsForLog(array $facts): array
    {
        unset($facts['email'], $facts['name']);
        return $facts;
    }
}
