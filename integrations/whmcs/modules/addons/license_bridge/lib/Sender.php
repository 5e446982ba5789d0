<?php
/**
 * One signed POST of one event to the bridge, with a short timeout, and what to do about the answer.
 */

namespace LicenseBridge;

if (!defined('WHMCS')) {
    die('This file cannot be accessed directly');
}

final class Sender
{
    public const DELIVERED = 'delivered';
    public const RETRY = 'retry';
    public const GIVE_UP = 'give_up';

    public const USER_AGENT = 'license-bridge-whmcs/1.0';

    /** @var string */
    private $url;
    /** @var string */
    private $secret;
    /** @var int */
    private $timeout;

    public function __construct(string $bridgeUrl, string $secret, int $timeoutSeconds = 5)
    {
        $this->url = self::endpoint($bridgeUrl);
        Signer::key($secret); // fail now, not per event, on a malformed secret
        $this->secret = $secret;
        $this->timeout = max(1, min(30, $timeoutSeconds));
    }

    /** "https://bridge.example" or ".../webhooks/billing" → the webhook URL. */
    public static function endpoint(string $bridgeUrl): string
    {
        $url = trim($bridgeUrl);
        if (!preg_match('#^https?://[^/\s]+#i', $url)) {
            throw new \InvalidArgumentException('the bridge URL must start with http:// or https://');
        }
        $url = rtrim($url, '/');
        return preg_match('#/webhooks/billing$#', $url) ? $url : $url . '/webhooks/billing';
    }

    /**
     * What an HTTP answer means for the event:
     * 2xx delivered (a duplicate answers 200); 409 "unknown service" (its service.created may still
     * be on the way), 408 and 429 are worth another try; any other 4xx means the event itself is
     * wrong and never gets better; 5xx, 3xx and no answer at all (status 0) are worth another try.
     */
    public static function classify(int $status): string
    {
        if ($status >= 200 && $status < 300) {
            return self::DELIVERED;
        }
        if (in_array($status, [408, 409, 429], true)) {
            return self::RETRY;
        }
        if ($status >= 400 && $status < 500) {
            return self::GIVE_UP;
        }
        return self::RETRY;
    }

    /**
     * @return array{status:int, outcome:string, error:?string, response:string, duration_ms:int}
     */
    public function send(string $webhookId, string $body): array
    {
        $headers = Signer::headers($this->secret, $webhookId, $body);
        $lines = ['Content-Type: application/json', 'Accept: application/json', 'User-Agent: ' . self::USER_AGENT, 'Expect:'];
        foreach ($headers as $name => $value) {
            $lines[] = "$name: $value";
        }
        $started = microtime(true);
        $ch = curl_init($this->url);
        curl_setopt_array($ch, [
            CURLOPT_POST => true,
            CURLOPT_POSTFIELDS => $body,
            CURLOPT_HTTPHEADER => $lines,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_FOLLOWLOCATION => false,
            CURLOPT_CONNECTTIMEOUT_MS => min($this->timeout, 3) * 1000,
            CURLOPT_TIMEOUT_MS => $this->timeout * 1000,
            CURLOPT_NOSIGNAL => true,
            CURLOPT_PROTOCOLS => CURLPROTO_HTTP | CURLPROTO_HTTPS,
        ]);
        $response = curl_exec($ch);
        $errno = curl_errno($ch);
        $error = $errno ? curl_error($ch) : null;
        $status = $errno ? 0 : (int) curl_getinfo($ch, CURLINFO_RESPONSE_CODE);
        curl_close($ch);
        return [
            'status' => $status,
            'outcome' => self::classify($status),
            'error' => $error !== null ? "curl error $errno: $error" : null,
            'response' => is_string($response) ? EventBuilder::clip($response, 2000) : '',
            'duration_ms' => (int) round((microtime(true) - $started) * 1000),
        ];
    }
}
