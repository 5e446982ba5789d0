<?php
/**
 * license-bridge provisioning API client, shared by every panel module.
 *
 * THE ONE SOURCE: integrations/shared/LicenseBridgeClient.php. Each module carries a byte-identical
 * copy (a panel installs one folder); `npm run integrations:sync` writes the copies and a test
 * fails when one differs. Edit this file, never a copy.
 *
 * Plain PHP 8.1+ with the curl extension; no Composer. The API is described in the bridge's
 * service contract, section 8: POST form parameters in, JSON out, Bearer token.
 *
 * The token is sent in the Authorization header only. It is never returned, logged or put in an
 * error message by this class: what it hands to a logger has it removed.
 */

if (!class_exists('LicenseBridgeClient', false)) {
    final class LicenseBridgeClient
    {
        /** @var callable|null fn(string $action, array $request, array $response): void */
        private $logger;

        /**
         * @param string $baseUrl e.g. "https://bridge.example.com:8080" (no trailing /provision/v1)
         * @param string $token the bridge's PROVISIONING_TOKEN
         * @param int $timeoutSeconds whole-call timeout; keep it above the bridge's PROVISION_WAIT_SECONDS (20)
         * @param callable|null $logger receives each call, the token removed (e.g. WHMCS logModuleCall)
         */
        public function __construct(
            private readonly string $baseUrl,
            // PHP 8.2+ keeps it out of stack traces; 8.1 ignores the attribute.
            #[\SensitiveParameter] private readonly string $token,
            private readonly int $timeoutSeconds = 30,
            ?callable $logger = null
        ) {
            $this->logger = $logger;
        }

        /** The bridge's base URL from a panel's server fields: scheme, host and optional port. */
        public static function baseUrl(string $scheme, string $host, $port = null): string
        {
            $scheme = strtolower(trim($scheme)) === 'http' ? 'http' : 'https';
            $host = trim($host);
            // An IPv6 literal needs brackets in a URL.
            if (str_contains($host, ':') && !str_starts_with($host, '[')) {
                $host = '[' . $host . ']';
            }
            $port = trim((string) $port);
            return $scheme . '://' . $host . ($port !== '' && $port !== '0' ? ':' . $port : '');
        }

        public function create(array $params): array { return $this->call('create', $params); }
        public function suspend(array $params): array { return $this->call('suspend', $params); }
        public function unsuspend(array $params): array { return $this->call('unsuspend', $params); }
        public function terminate(array $params): array { return $this->call('terminate', $params); }
        public function renew(array $params): array { return $this->call('renew', $params); }
        public function changeIp(array $params): array { return $this->call('change-ip', $params); }
        public function changePackage(array $params): array { return $this->call('change-package', $params); }
        public function info(array $params): array { return $this->call('info', $params, 'GET'); }

        /**
         * One call. Never throws for a network or HTTP failure; returns:
         *  - ok:      true when the bridge answered 200 with success (the work is done)
         *  - pending: true when it answered 202 (still running; the same call later gives the outcome)
         *  - status:  the HTTP status (0 when no answer came)
         *  - data:    the decoded JSON answer (the licence on success), or []
         *  - code:    the bridge's stable error code (e.g. insufficient_balance), null on success
         *  - error:   a message for a person (no token in it), null on success
         */
        public function call(string $name, array $params, string $method = 'POST'): array
        {
            $params = array_filter($params, static fn ($v) => $v !== null && $v !== '');
            $url = rtrim($this->baseUrl, '/') . '/provision/v1/' . $name;
            $query = http_build_query(array_map('strval', $params));
            $curl = curl_init();
            $options = [
                CURLOPT_RETURNTRANSFER => true,
                CURLOPT_CONNECTTIMEOUT => min(5, $this->timeoutSeconds),
                CURLOPT_TIMEOUT => $this->timeoutSeconds,
                CURLOPT_HTTPHEADER => ['Authorization: Bearer ' . $this->token, 'Accept: application/json'],
                CURLOPT_FOLLOWLOCATION => false,
            ];
            if ($method === 'GET') {
                $options[CURLOPT_URL] = $url . ($query !== '' ? '?' . $query : '');
                $options[CURLOPT_HTTPGET] = true;
            } else {
                $options[CURLOPT_URL] = $url;
                $options[CURLOPT_CUSTOMREQUEST] = $method;
                $options[CURLOPT_POSTFIELDS] = $query;
                $options[CURLOPT_HTTPHEADER][] = 'Content-Type: application/x-www-form-urlencoded';
            }
            curl_setopt_array($curl, $options);
            $raw = curl_exec($curl);
            $status = (int) curl_getinfo($curl, CURLINFO_RESPONSE_CODE);
            $networkError = $raw === false ? curl_error($curl) : null;
            curl_close($curl);

            $data = is_string($raw) ? json_decode($raw, true) : null;
            $data = is_array($data) ? $data : [];
            $result = self::result($status, $data, $networkError, $url);
            $this->log($name, ['method' => $method, 'url' => $url, 'params' => $params], $result, is_string($raw) ? $raw : '');
            return $result;
        }

        private static function result(int $status, array $data, ?string $networkError, string $url): array
        {
            if ($networkError !== null) {
                return ['ok' => false, 'pending' => false, 'status' => 0, 'data' => [], 'code' => 'unreachable',
                    'error' => 'license-bridge could not be reached at ' . $url . ': ' . $networkError];
            }
            if ($status === 200 && ($data['success'] ?? false) === true) {
                return ['ok' => true, 'pending' => false, 'status' => 200, 'data' => $data, 'code' => null, 'error' => null];
            }
            if ($status === 202) {
                return ['ok' => false, 'pending' => true, 'status' => 202, 'data' => $data, 'code' => 'pending',
                    'error' => (string) ($data['message'] ?? 'still in progress')];
            }
            $error = is_string($data['error'] ?? null) ? $data['error'] : 'license-bridge answered HTTP ' . $status;
            if (isset($data['errors']) && is_array($data['errors'])) {
                $parts = [];
                foreach ($data['errors'] as $field => $messages) {
                    $parts[] = $field . ' ' . implode('; ', array_map('strval', (array) $messages));
                }
                $error .= ': ' . implode(', ', $parts);
            }
            return ['ok' => false, 'pending' => false, 'status' => $status, 'data' => $data,
                'code' => is_string($data['code'] ?? null) ? $data['code'] : 'http_' . $status, 'error' => $error];
        }

        private function log(string $action, array $request, array $result, string $raw): void
        {
            if ($this->logger === null) {
                return;
            }
            try {
                ($this->logger)($action, $request, ['status' => $result['status'], 'body' => self::scrub($raw, [$this->token])]);
            } catch (\Throwable $e) {
                // A broken logger must never break the panel's action.
            }
        }

        /**
         * A customer's name as the bridge takes it: printable (control characters and line
         * separators become spaces), at most 200 UTF-16 units (what the bridge counts), null
         * when nothing is left. A name must never block a purchase. Plain PCRE, so a PHP
         * without mbstring (Debian's php-cli, many panel hosts) runs it.
         */
        public static function customerName(?string $name): ?string
        {
            $name = self::printable((string) $name);
            $name = self::clip($name, 200);
            return $name !== '' ? $name : null;
        }

        /** Text with control characters and line separators as single spaces, trimmed; valid UTF-8. */
        public static function printable(string $text): string
        {
            if (preg_match('//u', $text) !== 1) {
                // Not UTF-8 (a panel on a legacy charset): keep the ASCII that is certain.
                $text = (string) preg_replace('/[^\x20-\x7E]+/', ' ', $text);
            }
            return trim((string) preg_replace('/[\x{0}-\x{1F}\x{7F}-\x{9F}\x{2028}\x{2029}]+/u', ' ', $text));
        }

        /**
         * The longest prefix of a UTF-8 text within $units UTF-16 units (a character outside the
         * BMP counts two, as in JavaScript), never cutting a character in half.
         */
        public static function clip(string $text, int $units): string
        {
            if (strlen($text) <= $units) {
                return $text;
            }
            if (preg_match_all('/./su', $text, $chars) === false) {
                return (string) preg_replace('/[^\x20-\x7E]+/', ' ', substr($text, 0, $units));
            }
            $out = '';
            $used = 0;
            foreach ($chars[0] as $char) {
                $used += strlen($char) === 4 ? 2 : 1;
                if ($used > $units) {
                    break;
                }
                $out .= $char;
            }
            return rtrim($out);
        }

        /** Removes each secret (and its URL-encoded form) from a text. */
        public static function scrub(string $text, array $secrets): string
        {
            foreach ($secrets as $secret) {
                if (is_string($secret) && $secret !== '') {
                    $text = str_replace([$secret, rawurlencode($secret), urlencode($secret)], '***', $text);
                }
            }
            return $text;
        }
    }
}
