<?php
/**
 * Standard Webhooks (standardwebhooks.com) signing, as license-bridge verifies it:
 * HMAC-SHA256 over "{id}.{timestamp}.{body}", keyed with the base64-decoded part of a
 * "whsec_<base64>" secret, sent as "webhook-signature: v1,<base64>".
 */

namespace LicenseBridge;

if (!defined('WHMCS')) {
    die('This file cannot be accessed directly');
}

final class Signer
{
    /** The key bytes of a "whsec_<base64>" secret; throws on anything else. */
    public static function key(string $secret): string
    {
        $secret = trim($secret);
        $b64 = strncmp($secret, 'whsec_', 6) === 0 ? substr($secret, 6) : $secret;
        $key = base64_decode($b64, true);
        if ($b64 === '' || $key === false || $key === '') {
            throw new \InvalidArgumentException('the signing secret must be "whsec_" followed by base64 (copy it from the bridge\'s WEBHOOK_SECRETS)');
        }
        return $key;
    }

    /** Base64 HMAC-SHA256 of "{id}.{timestamp}.{body}". */
    public static function sign(string $secret, string $id, int $timestamp, string $body): string
    {
        return base64_encode(hash_hmac('sha256', $id . '.' . $timestamp . '.' . $body, self::key($secret), true));
    }

    /**
     * The three Standard Webhooks headers for one delivery attempt. The timestamp is the time of
     * sending (the bridge rejects anything more than 5 minutes off), so a retried event is re-signed.
     *
     * @return array<string, string>
     */
    public static function headers(string $secret, string $id, string $body, ?int $now = null): array
    {
        $ts = $now ?? time();
        return [
            'webhook-id' => $id,
            'webhook-timestamp' => (string) $ts,
            'webhook-signature' => 'v1,' . self::sign($secret, $id, $ts, $body),
        ];
    }
}
