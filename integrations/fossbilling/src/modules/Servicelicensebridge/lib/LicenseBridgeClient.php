<?php
/**
 * license-bridge provisioning API client, shared by every panel module.
 *
 * THE ONE SOURCE: integrations/shared/ (this file, LicenseBridgeRules.php, and
 * LicenseBridgeMessages.php, which is generated from the bridge's TypeScript). Each module carries
 * byte-identical copies (a panel installs one folder); `npm run integrations:sync` writes them, and
 * `npm run integrations:sync -- --check` (CI) fails when one differs. Edit the sources, never a copy.
 *
 * Plain PHP 8.1+ with the curl extension and PHP's own json; no mbstring, no Composer. The API is described in the bridge's
 * service contract, section 8: POST form parameters in, JSON out, Bearer token.
 *
 * The token is sent in the Authorization header only. It is never returned, logged or put in an
 * error message by this class: what it hands to a logger has it removed.
 */

require_once __DIR__ . '/LicenseBridgeRules.php';
require_once __DIR__ . '/LicenseBridgeMessages.php';

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
         * @param string $panel names the panel in the User-Agent (whmcs, blesta, ...), which the bridge
         *                      records per call and per service and checks against the versions it supports
         */
        public function __construct(
            private readonly string $baseUrl,
            // PHP 8.2+ keeps it out of stack traces; 8.1 ignores the attribute.
            #[\SensitiveParameter] private readonly string $token,
            private readonly int $timeoutSeconds = 30,
            ?callable $logger = null,
            private readonly string $panel = 'module'
        ) {
            $this->logger = $logger;
        }

        /** `license-bridge-<panel>/<module version>`: sent on every call. */
        public function userAgent(): string
        {
            $panel = strtolower((string) preg_replace('/[^A-Za-z0-9]+/', '', $this->panel));
            return 'license-bridge-' . ($panel !== '' ? $panel : 'module') . '/' . LicenseBridgeMessages::MODULE_VERSION;
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
         *  - hint:    what the panel's staff should do about `code` (LicenseBridgeMessages), '' when nothing
         */
        public function call(string $name, array $params, string $method = 'POST'): array
        {
            $params = LicenseBridgeRules::params($params);
            $url = rtrim($this->baseUrl, '/') . '/provision/v1/' . $name;
            $query = http_build_query(array_map('strval', $params));
            $curl = curl_init();
            $options = [
                CURLOPT_RETURNTRANSFER => true,
                CURLOPT_CONNECTTIMEOUT => min(5, $this->timeoutSeconds),
                CURLOPT_TIMEOUT => $this->timeoutSeconds,
                CURLOPT_HTTPHEADER => ['Authorization: Bearer ' . $this->token, 'Accept: application/json', 'User-Agent: ' . $this->userAgent()],
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
            $result['hint'] = LicenseBridgeMessages::hint($result['code'], $name);
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
