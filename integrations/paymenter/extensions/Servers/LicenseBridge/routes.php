<?php

/**
 * The client area's change-IP form (the "Licence" tab of a service) posts here. Registered from
 * LicenseBridge::boot(), the way Paymenter's Stripe gateway registers its routes; "web" gives the
 * session and the CSRF check, "auth" a logged-in customer (ownership is checked in the handler).
 */

use Illuminate\Support\Facades\Route;
use Paymenter\Extensions\Servers\LicenseBridge\LicenseBridge;

Route::post('/extensions/licensebridge/services/{service}/change-ip', [LicenseBridge::class, 'changeIpFromClientArea'])
    ->middleware(['web', 'auth'])
    ->name('extensions.servers.licensebridge.change-ip');
