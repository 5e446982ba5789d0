<?php

declare(strict_types=1);

/**
 * STAND-IN (test only) for src/library/Box/Crypt.php (FOSSBilling 0.8.5): FOSSBilling stores an
 * extension's configuration encrypted with the instance's salt (Extension\Service::setConfig,
 * Module::getConfig). The real class uses OpenSSL (AES-256-CBC); this one only makes the stored
 * text unreadable at a glance, so a test can tell a value the module wrote in clear from one it
 * handed to FOSSBilling's encrypted configuration.
 */
class Box_Crypt
{
    public function encrypt(string $text, ?string $pass = null): string
    {
        return 'standin-encrypted:' . base64_encode(strrev($text));
    }

    public function decrypt(?string $text, ?string $pass = null): string|false
    {
        if (!is_string($text) || !str_starts_with($text, 'standin-encrypted:')) {
            return false;
        }
        $plain = base64_decode(substr($text, strlen('standin-encrypted:')), true);

        return $plain === false ? false : strrev($plain);
    }
}
