<?php
// Test driver: one LicenseBridgeClient call from the command line, printed as JSON with
// everything the client handed to its logger. Usage:
//   LB_URL=... LB_TOKEN=... LB_PARAMS='{"a":"b"}' php client-call.php <call> [METHOD]
require __DIR__ . '/../LicenseBridgeClient.php';

$logged = [];
$client = new LicenseBridgeClient(
    getenv('LB_URL') ?: 'http://127.0.0.1:9',
    getenv('LB_TOKEN') ?: '',
    (int) (getenv('LB_TIMEOUT') ?: 30),
    function (string $action, array $request, array $response) use (&$logged) {
        $logged[] = ['action' => $action, 'request' => $request, 'response' => $response];
    },
    getenv('LB_PANEL') ?: 'module'
);
$params = json_decode(getenv('LB_PARAMS') ?: '{}', true) ?: [];
$result = $client->call($argv[1], $params, $argv[2] ?? 'POST');
echo json_encode(['result' => $result, 'logged' => $logged, 'user_agent' => $client->userAgent()], JSON_UNESCAPED_SLASHES);
