<?php
// Test driver: the shared client's text helpers on the inputs given as a JSON list in LB_TEXTS
// (base64, so bytes that are not UTF-8 reach PHP as they are), printed as JSON (base64 again).
require __DIR__ . '/../LicenseBridgeClient.php';

$out = ['mbstring' => extension_loaded('mbstring'), 'names' => [], 'clipped' => []];
foreach (json_decode(getenv('LB_TEXTS') ?: '[]', true) as $encoded) {
    $text = base64_decode($encoded);
    $name = LicenseBridgeRules::customerName($text);
    $out['names'][] = $name === null ? null : base64_encode($name);
    $out['clipped'][] = base64_encode(LicenseBridgeRules::clip($text, 5));
}
echo json_encode($out);
