<?php

/**
 * The client area's change-IP form (the "Licence" tab of a service) posts here. Loaded by
 * LicenseBridge::registerRoutes(): from boot(), the way Paymenter's extensions register their routes,
 * and again when a request is routed if the route cache replaced it (see LicenseBridge::boot()).
 * "web" gives the session and the CSRF check, "auth" a logged-in customer (ownership is checked in
 * the handler). The name is part of the action ('as'), so the router's name look-up has it as soon
 * as the route is added, also when it is added to a cached (compiled) route collection.
 */

use Illuminate\Support\Facades\Route;
use Paymenter\Extensions\Servers\LicenseBridge\LicenseBridge;

Route::post('/extensions/licensebridge/services/{service}/change-ip', [
    'uses' => LicenseBridge::class . '@changeIpFromClientArea',
    'as' => LicenseBridge::CHANGE_IP_ROUTE,
    'middleware' => ['web', 'auth'],
]);
