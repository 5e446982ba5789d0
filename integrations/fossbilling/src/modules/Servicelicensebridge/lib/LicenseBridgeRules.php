<?php
/**
 * license-bridge: the rules every panel module applies to what it sends, in one place.
 *
 * THE ONE SOURCE: integrations/shared/LicenseBridgeRules.php, copied into each module by
 * `npm run integrations:sync` (see LicenseBridgeClient.php). Plain PHP 8.1+: PCRE and PHP's own
 * string functions only (no mbstring, no intl), as a stock panel host has.
 *
 * The bridge validates everything again and answers with the exact field that is wrong; these
 * rules only make a module send what the bridge takes (a customer's name is cleaned, never a
 * reason to refuse a purchase) and leave every decision (which IPs may hold a licence, which
 * product is which licence) to the bridge, so the two cannot disagree.
 */

if (!class_exists('LicenseBridgeRules', false)) {
    final class LicenseBridgeRules
    {
        /** The bridge's billing-cycle words, by the months they stand for. */
        public const CYCLES = [1 => 'monthly', 3 => 'quarterly', 6 => 'semiannually', 12 => 'annually', 24 => 'biennially', 36 => 'triennially'];

        /**
         * A customer's name as the bridge takes it: printable (control characters and line
         * separators become spaces), at most 200 UTF-16 units (what the bridge counts), null
         * when nothing is left. A name must never block a purchase.
         */
        public static function customerName(?string $name): ?string
        {
            $name = self::clip(self::printable((string) $name), 200);
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

        /**
         * An IP address as typed into a panel: trimmed, without URL brackets; null when it is not
         * an IPv4 or IPv6 address at all. Whether it may hold a licence (public, not reserved) is
         * the bridge's decision, answered as 422 ip_unusable naming the field.
         */
        public static function ip($value): ?string
        {
            if (!is_scalar($value)) {
                return null;
            }
            $ip = trim((string) $value);
            if (strlen($ip) > 2 && $ip[0] === '[' && substr($ip, -1) === ']') {
                $ip = substr($ip, 1, -1);
            }
            return filter_var($ip, FILTER_VALIDATE_IP) !== false ? $ip : null;
        }

        /**
         * The bridge's billing cycle for a panel's: one of its words in any spelling
         * ("Semi-Annually", "annual", "yearly"), or months (1, 3, 6, 12, 24, 36). Null when none
         * is given; false when it is one the licences are not sold for (e.g. "One Time", 2 months).
         *
         * @return string|false|null
         */
        public static function cycle($value)
        {
            if ($value === null || (is_string($value) && trim($value) === '')) {
                return null;
            }
            if (!is_scalar($value)) {
                return false;
            }
            $s = strtolower((string) preg_replace('/[^A-Za-z0-9]+/', '', (string) $value));
            if (preg_match('/^[0-9]+$/D', $s) === 1) {
                return self::CYCLES[(int) $s] ?? false;
            }
            $aliases = ['month' => 'monthly', 'quarter' => 'quarterly', 'semiannual' => 'semiannually', 'halfyearly' => 'semiannually',
                'annual' => 'annually', 'year' => 'annually', 'yearly' => 'annually', 'biennial' => 'biennially', 'triennial' => 'triennially'];
            $s = $aliases[$s] ?? $s;
            return in_array($s, self::CYCLES, true) ? $s : false;
        }

        /**
         * A panel's date as the bridge takes it: "2026-12-31" from "2026-12-31", "2026-12-31 00:00:00"
         * or ISO 8601; null for none (blank, 0000-00-00) or anything else.
         */
        public static function date($value): ?string
        {
            if (!is_scalar($value)) {
                return null;
            }
            $s = trim((string) $value);
            if (preg_match('/^([0-9]{4}-[0-9]{2}-[0-9]{2})(?:[ T].*)?$/D', $s, $m) !== 1 || $m[1] === '0000-00-00') {
                return null;
            }
            return $m[1];
        }

        /** Parameters of a call: blanks and nulls dropped (the bridge reads them as absent anyway), names cleaned. */
        public static function params(array $params): array
        {
            if (array_key_exists('customer_name', $params)) {
                $params['customer_name'] = self::customerName(is_scalar($params['customer_name']) ? (string) $params['customer_name'] : null);
            }
            return array_filter($params, static fn ($v) => $v !== null && $v !== '');
        }
    }
}
