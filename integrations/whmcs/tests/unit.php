<?php
/**
 * Plain-PHP unit checks of the module's pure parts (no WHMCS, no network). Exits non-zero on a
 * failure. Run: php integrations/whmcs/tests/unit.php
 */

define('WHMCS', true);
error_reporting(E_ALL);
set_error_handler(function ($no, $str, $file, $line) {
    throw new \ErrorException($str, 0, $no, $file, $line); // a notice or deprecation fails the run
});

// Stand-ins, defined before lib/Whmcs.php so it keeps them.
$GLOBALS['unit_settings'] = [
    'bridge_url' => 'http://127.0.0.1:1',
    'signing_secret' => 'whsec_dGVzdC1zZWNyZXQtMDEyMzQ1Njc4OWFiY2RlZg==',
    'product_ids' => '',
    'timeout' => '5',
];
function lb_module_setting(string $name): ?string
{
    return $GLOBALS['unit_settings'][$name] ?? null;
}
function lb_db(): \PDO
{
    static $pdo = null;
    if ($pdo === null) {
        $pdo = new \PDO('sqlite::memory:');
        $pdo->setAttribute(\PDO::ATTR_ERRMODE, \PDO::ERRMODE_EXCEPTION);
    }
    return $pdo;
}

require dirname(__DIR__) . '/modules/addons/license_bridge/lib/bootstrap.php';

use LicenseBridge\EventBuilder as EB;
use LicenseBridge\Queue;
use LicenseBridge\Sender;
use LicenseBridge\Signer;

$failures = 0;
$checks = 0;
function check(string $what, bool $ok, $detail = null): void
{
    global $failures, $checks;
    $checks++;
    if (!$ok) {
        $failures++;
        fwrite(STDERR, "FAIL: $what" . ($detail !== null ? ' — ' . var_export($detail, true) : '') . "\n");
    }
}
function same(string $what, $expected, $actual): void
{
    check($what, $expected === $actual, ['expected' => $expected, 'actual' => $actual]);
}
function throws(string $what, callable $fn): void
{
    try {
        $fn();
        check($what, false, 'no exception');
    } catch (\Throwable $e) {
        check($what, true);
    }
}

// ---- Signer: vectors computed independently (node:crypto createHmac, and the Standard Webhooks reference vector)
$secret = 'whsec_dGVzdC1zZWNyZXQtMDEyMzQ1Njc4OWFiY2RlZg==';
$body = '{"type":"service.created","service":{"id":"4711"}}';
same('signer: node crypto vector', '0qFtg0ovYwgNuKOy8eA4W/mnQ8K2qasfiHakcfilHzI=', Signer::sign($secret, 'whmcs-create-4711', 1767225600, $body));
same(
    'signer: Standard Webhooks reference vector',
    'g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    Signer::sign('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')
);
same('signer: headers', [
    'webhook-id' => 'whmcs-create-4711',
    'webhook-timestamp' => '1767225600',
    'webhook-signature' => 'v1,0qFtg0ovYwgNuKOy8eA4W/mnQ8K2qasfiHakcfilHzI=',
], Signer::headers($secret, 'whmcs-create-4711', $body, 1767225600));
throws('signer: a secret that is not base64 is refused', function () {
    Signer::key('whsec_not base64!');
});
throws('signer: an empty secret is refused', function () {
    Signer::key('');
});

// ---- billing cycles
foreach (['Monthly' => 'monthly', 'Quarterly' => 'quarterly', 'Semi-Annually' => 'semiannually', 'Annually' => 'annually',
          'Biennially' => 'biennially', 'Triennially' => 'triennially', 'semi-annually' => 'semiannually',
          'Free Account' => null, 'One Time' => null, '' => null, 'Weekly' => null] as $whmcs => $bridge) {
    same("cycle \"$whmcs\"", $bridge, EB::cycle($whmcs));
}
same('cycle: null', null, EB::cycle(null));

// ---- dates and IPs
same('date: Y-m-d', '2026-07-01', EB::date('2026-07-01'));
same('date: with time', '2026-07-01', EB::date('2026-07-01 00:00:00'));
same('date: 0000-00-00 is none', null, EB::date('0000-00-00'));
same('date: not a real date', null, EB::date('2026-02-30'));
same('date: DateTime', '2027-01-31', EB::date(new DateTimeImmutable('2027-01-31 10:00:00')));
same('ip: v4', '203.0.113.10', EB::ip(' 203.0.113.10 '));
same('ip: v6', '2001:db8::1', EB::ip('2001:db8::1'));
same('ip: junk', null, EB::ip('203.0.113.300'));
same('product list', ['12', '13', '20'], EB::productList(' 12, 13 ,20,'));
same('product list: empty', [], EB::productList(''));

// ---- events from sample hook vars (AfterModuleCreate's $vars['params'])
$params = [
    'serviceid' => 4711,
    'pid' => 13,
    'dedicatedip' => '203.0.113.10',
    'clientsdetails' => ['email' => 'ann@example.com', 'firstname' => 'Ann', 'lastname' => 'Example'],
    'model' => (object) ['id' => 4711, 'packageid' => 13, 'billingcycle' => 'Semi-Annually', 'nextduedate' => '2026-07-01', 'domainstatus' => 'Active'],
];
$facts = EB::factsFromParams($params);
same('facts from params', [
    'serviceid' => '4711', 'pid' => '13', 'billingcycle' => 'Semi-Annually', 'nextduedate' => '2026-07-01', 'ip' => '203.0.113.10',
    'status' => 'Active', 'email' => 'ann@example.com', 'name' => 'Ann Example', 'addonid' => 0,
], $facts);
same('no lookup needed for a complete create', false, EB::needsLookup('create', $facts));
same('a renewal always looks the due date up', true, EB::needsLookup('renew', $facts));

$r = EB::build('create', $facts, null);
same('create: webhook-id', 'whmcs-create-4711', $r['event']['webhook_id'] ?? null);
same('create: body', [
    'type' => 'service.created',
    'service' => [
        'id' => '4711', 'product_id' => '13', 'billing_cycle' => 'semiannually', 'ip' => '203.0.113.10',
        'customer' => ['email' => 'ann@example.com', 'name' => 'Ann Example'],
    ],
], $r['event']['body'] ?? null);
same('create: state', ['ip' => '203.0.113.10', 'pid' => '13', 'status' => 'active', 'status_seq' => 0, 'pid_seq' => 0, 'ip_seq' => 0], $r['state']);
same('create: re-run, same id', 'whmcs-create-4711', EB::build('create', $facts, $r['state'])['event']['webhook_id']);
same('create: encoded', '{"type":"service.created","service":{"id":"4711","product_id":"13","billing_cycle":"semiannually","ip":"203.0.113.10","customer":{"email":"ann@example.com","name":"Ann Example"}}}', EB::encode($r['event']['body']));

$noIp = EB::build('create', array_merge($facts, ['ip' => '']), null);
check('create without an IP: skipped with a reason', $noIp['event'] === null && strpos($noIp['reason'], 'dedicated IP') !== false, $noIp);
$free = EB::build('create', array_merge($facts, ['billingcycle' => 'Free Account']), null);
check('unsupported cycle: skipped and logged', $free['event'] === null && !$free['quiet'] && strpos($free['reason'], 'Free Account') !== false, $free);
$free2 = EB::build('suspend', array_merge($facts, ['billingcycle' => 'One Time']), null);
check('unsupported cycle, later event: skipped', $free2['event'] === null, $free2);
$filtered = EB::build('create', $facts, null, ['12', '20']);
check('product not forwarded: skipped quietly', $filtered['event'] === null && $filtered['quiet'], $filtered);
check('product in the list: forwarded', EB::build('create', $facts, null, ['13'])['event'] !== null);
$addon = EB::build('create', array_merge($facts, ['addonid' => 3]), null);
check('product addon: skipped', $addon['event'] === null, $addon);
$badMail = EB::build('create', array_merge($facts, ['email' => 'not-an-email']), null);
check('create without a valid e-mail: skipped', $badMail['event'] === null, $badMail);

// facts from the lookup (tblhosting + tblclients) build the same event
$lookup = ['serviceid' => '4711', 'pid' => '13', 'billingcycle' => 'Semi-Annually', 'nextduedate' => '2026-07-01', 'dedicatedip' => '203.0.113.10',
           'status' => 'Active', 'email' => 'ann@example.com', 'firstname' => 'Ann', 'lastname' => 'Example'];
same('create from a lookup = create from params', $r['event'], EB::build('create', EB::factsFromLookup($lookup), null)['event']);
$partial = EB::merge(EB::factsFromParams(['serviceid' => 4711, 'pid' => 13]), EB::factsFromLookup($lookup));
same('params without model fall back to the lookup', $r['event'], EB::build('create', $partial, null)['event']);
same('merge prefers the lookup where told', '2026-08-01', EB::merge($facts, ['nextduedate' => '2026-08-01'], ['nextduedate'])['nextduedate']);

// ---- status events: stable on re-runs, distinct for new transitions
$st = $r['state'];
$s1 = EB::build('suspend', $facts, $st);
same('suspend: type', 'service.suspended', $s1['event']['type']);
same('suspend: body', ['type' => 'service.suspended', 'service' => ['id' => '4711', 'product_id' => '13', 'billing_cycle' => 'semiannually']], $s1['event']['body']);
check('suspend: id format', (bool) preg_match('/^whmcs-suspend-4711-[0-9a-f]{40}$/', $s1['event']['webhook_id']), $s1['event']['webhook_id']);
same('suspend: re-run (already suspended) keeps the id', $s1['event']['webhook_id'], EB::build('suspend', $facts, $s1['state'])['event']['webhook_id']);
$u1 = EB::build('unsuspend', $facts, $s1['state']);
same('unsuspend: type', 'service.unsuspended', $u1['event']['type']);
$s2 = EB::build('suspend', $facts, $u1['state']);
check('a second suspension later gets a new id', $s2['event']['webhook_id'] !== $s1['event']['webhook_id'], [$s1['event']['webhook_id'], $s2['event']['webhook_id']]);
$t1 = EB::build('terminate', $facts, $s2['state']);
same('terminate: type', 'service.terminated', $t1['event']['type']);
same('terminate: state', 'terminated', $t1['state']['status']);
same('a status event with no state yet', 1, EB::build('suspend', $facts, null)['state']['status_seq']);

// ---- renewals: keyed by the due date only
$rn = EB::build('renew', $facts, $st);
same('renew: body', ['type' => 'service.renewed', 'service' => ['id' => '4711', 'product_id' => '13', 'billing_cycle' => 'semiannually', 'next_due_date' => '2026-07-01']], $rn['event']['body']);
same('renew: id', EB::id('renew', '4711', 'due:2026-07-01'), $rn['event']['webhook_id']);
same('renew: the same from InvoicePaid (lookup facts, no state)', $rn['event']['webhook_id'], EB::build('renew', EB::factsFromLookup($lookup), null)['event']['webhook_id']);
check('renew: the next payment is another id', EB::build('renew', array_merge($facts, ['nextduedate' => '2027-01-01']), $st)['event']['webhook_id'] !== $rn['event']['webhook_id']);
check('renew without a due date: skipped', EB::build('renew', array_merge($facts, ['nextduedate' => null]), $st)['event'] === null);

// ---- package changes
$to15 = array_merge($facts, ['pid' => '15']);
$c1 = EB::build('changepackage', $to15, $st);
same('change package: body', ['type' => 'service.product_changed', 'service' => ['id' => '4711', 'billing_cycle' => 'semiannually', 'product_id' => '13'], 'changes' => ['product_id' => '15']], $c1['event']['body']);
same('change package: id', EB::id('changepackage', '4711', 'pid:15#1'), $c1['event']['webhook_id']);
same('change package: re-run keeps the id', $c1['event']['webhook_id'], EB::build('changepackage', $to15, $c1['state'])['event']['webhook_id']);
$c0 = EB::build('changepackage', $facts, $st);
check('change package without a product change: skipped', $c0['event'] === null && $c0['quiet'], $c0);
$back = EB::build('changepackage', $facts, $c1['state']);
$again = EB::build('changepackage', $to15, $back['state']);
check('13 → 15 → 13 → 15: the second 13 → 15 is a new id', $again['event']['webhook_id'] !== $c1['event']['webhook_id']);

// ---- IP changes
$ipNew = array_merge($facts, ['ip' => '203.0.113.99']);
$i1 = EB::build('ipchange', $ipNew, $st);
same('ip change: body', ['type' => 'service.ip_changed', 'service' => ['id' => '4711', 'product_id' => '13', 'billing_cycle' => 'semiannually', 'ip' => '203.0.113.10'], 'changes' => ['ip' => '203.0.113.99']], $i1['event']['body']);
same('ip change: id', EB::id('ipchange', '4711', 'ip:203.0.113.10>203.0.113.99#1'), $i1['event']['webhook_id']);
$i2 = EB::build('ipchange', $ipNew, $i1['state']);
check('ip unchanged since: nothing, quietly', $i2['event'] === null && $i2['quiet'], $i2);
$base = EB::build('ipchange', $facts, null);
check('ip: first sight records a baseline, sends nothing', $base['event'] === null && $base['state']['ip'] === '203.0.113.10', $base);
check('ip: pending services are not tracked', EB::build('ipchange', array_merge($ipNew, ['status' => 'Pending']), $st)['event'] === null);
check('ip: an invalid new IP is not sent', EB::build('ipchange', array_merge($facts, ['ip' => 'n/a']), $st)['event'] === null);

check('ip: a terminated service is not changed', EB::build('ipchange', $ipNew, $t1['state'])['event'] === null);
check('package: a terminated service is not changed', EB::build('changepackage', $to15, $t1['state'])['event'] === null);

// ---- test event
$te = EB::testEvent(1767225600);
same('test event: shaped like service.created', 'service.created', $te['body']['type']);
same('test event: test service id', 'whmcs-test-1767225600', $te['service_id']);

// ---- Sender: answer classes and URLs
foreach ([200 => 'delivered', 202 => 'delivered', 409 => 'retry', 408 => 'retry', 429 => 'retry', 500 => 'retry', 503 => 'retry', 0 => 'retry', 302 => 'retry',
          400 => 'give_up', 401 => 'give_up', 404 => 'give_up', 413 => 'give_up', 415 => 'give_up', 422 => 'give_up'] as $status => $outcome) {
    same("classify $status", $outcome, Sender::classify($status));
}
same('endpoint: base', 'https://b.example/webhooks/billing', Sender::endpoint('https://b.example/'));
same('endpoint: full', 'http://127.0.0.1:8080/webhooks/billing', Sender::endpoint('http://127.0.0.1:8080/webhooks/billing'));
throws('endpoint: not http(s)', function () {
    Sender::endpoint('ftp://x');
});

// ---- Queue on SQLite
lb_install_schema();
$q = new Queue(lb_db(), 3);
$ev = function (string $id, string $sid) {
    return ['webhook_id' => $id, 'service_id' => $sid, 'type' => 'service.suspended'];
};
same('queue: insert', true, $q->enqueue($ev('a1', 'A'), '{}'));
same('queue: same webhook-id again', false, $q->enqueue($ev('a1', 'A'), '{}'));
$q->enqueue($ev('a2', 'A'), '{}');
$q->enqueue($ev('b1', 'B'), '{}');
$sent = [];
$answers = ['a1' => 503, 'a2' => 202, 'b1' => 202];
$results = $q->drain(function ($row) use (&$sent, &$answers) {
    $sent[] = $row['webhook_id'];
    $s = $answers[$row['webhook_id']];
    return ['status' => $s, 'outcome' => Sender::classify($s), 'error' => null, 'response' => ''];
});
same('queue: a retried row blocks the later rows of its service only', ['a1', 'b1'], $sent);
same('queue: left pending', ['a1', 'a2'], array_column($q->rows(), 'webhook_id'));
$answers['a1'] = 202;
$sent = [];
$q->drain(function ($row) use (&$sent, &$answers) {
    $sent[] = $row['webhook_id'];
    return ['status' => $answers[$row['webhook_id']], 'outcome' => 'delivered', 'error' => null, 'response' => ''];
});
same('queue: oldest first once unblocked', ['a1', 'a2'], $sent);
same('queue: empty after delivery', 0, $q->count());
$q->enqueue($ev('c1', 'C'), '{}');
for ($i = 0; $i < 3; $i++) {
    $q->drain(function () {
        return ['status' => 0, 'outcome' => 'retry', 'error' => 'down', 'response' => ''];
    });
}
same('queue: given up after the attempt cap', [0, 1], [$q->count(), $q->count(Queue::FAILED)]);
$q->enqueue($ev('d1', 'D'), '{}');
$q->drain(function () {
    return ['status' => 422, 'outcome' => 'give_up', 'error' => null, 'response' => 'bad'];
});
same('queue: a refused event is given up at once', 2, $q->count(Queue::FAILED));
same('queue: requeue', 2, $q->requeue());
same('queue: requeued rows are pending', 2, $q->count());
$q->putState('A', ['ip' => '1.2.3.4', 'pid' => 13, 'status' => 'active']);
$q->putState('A', ['ip' => '1.2.3.5', 'pid' => 13, 'status' => 'suspended', 'status_seq' => 1]);
$stA = $q->state('A');
same('state: upsert', ['1.2.3.5', '13', 'suspended', 1], [$stA['ip'], $stA['pid'], $stA['status'], $stA['status_seq']]);
same('state: none', null, $q->state('Z'));

// ---- scrubbing
$log = "secret $secret key dGVzdC1zZWNyZXQtMDEyMzQ1Njc4OWFiY2RlZg== raw test-secret-0123456789abcdef\nwebhook-signature: v1,0qFtg0ovYwgNuKOy8eA4W/mnQ8K2qasfiHakcfilHzI=\n{\"webhook-signature\":\"v1,abc\"} other whsec_QUJDREVGR0g=";
$clean = lb_scrub($log);
foreach (['dGVzdC1zZWNyZXQ', 'test-secret-0123456789abcdef', '0qFtg0ovYwgNuKOy8eA4W', 'v1,abc', 'QUJDREVGR0g'] as $needle) {
    check("scrub removes $needle", strpos($clean, $needle) === false, $clean);
}
check('scrub keeps the rest', strpos($clean, 'other') !== false, $clean);

if ($failures) {
    fwrite(STDERR, "$failures of $checks checks failed\n");
    exit(1);
}
echo "ok: $checks checks passed\n";
