<?php

declare(strict_types=1);

/**
 * STAND-IN for FOSSBilling's exception classes and __trans (test only).
 *
 * Behaviour imitated from FOSSBilling 0.8.5 (commit 544bf2b8):
 *  - src/library/FOSSBilling/Exception.php: constructor (string $message, ?array $variables,
 *    int $code, bool $protected); the message goes through __trans with the variables; when DEBUG
 *    is on it error_log()s "Exception: <message>" and a stack trace that prints every STRING
 *    argument of every frame, unless $protected.
 *  - src/library/FOSSBilling/InformationException.php: the same constructor; a subclass.
 *  - src/library/Box/Translate.php: __trans(msgid, values) = strtr(gettext(msgid), values).
 */

namespace {
    if (!function_exists('__trans')) {
        function __trans(string $msgid, ?array $values = null): string
        {
            return is_array($values) ? strtr($msgid, $values) : $msgid;
        }
    }
}

namespace FOSSBilling {
    class Exception extends \Exception
    {
        public function __construct(string $message, ?array $variables = null, int $code = 0, bool $protected = false)
        {
            $message = __trans($message, $variables);
            if (DEBUG) {
                error_log("Exception: {$message}");
                error_log('Stack trace:');
                error_log($this->trace($protected));
            }
            parent::__construct($message, $code);
        }

        /** Like FOSSBilling's: function(arg, arg) per frame, string arguments printed in full. */
        private function trace(bool $protected): string
        {
            $lines = [];
            foreach (array_slice(debug_backtrace(), 1, 25) as $i => $frame) {
                $args = [];
                foreach ($frame['args'] ?? [] as $arg) {
                    $args[] = $protected ? '***' : (is_string($arg) ? $arg : '');
                }
                $lines[] = '#' . $i . ' ' . ($frame['file'] ?? 'NO_FILE') . '(' . ($frame['line'] ?? '?') . '): '
                    . ($frame['class'] ?? '') . ($frame['type'] ?? '') . $frame['function'] . '(' . implode(', ', $args) . ')';
            }

            return implode("\n", $lines);
        }
    }

    class InformationException extends Exception
    {
    }
}
