<?php

declare(strict_types=1);

/**
 * STAND-IN for FOSSBilling's order module (test only): the order flows that call a custom
 * product's plug-in, and what each does with the plug-in's exception. Written from FOSSBilling
 * 0.8.5 (commit 544bf2b8):
 *  - src/modules/Order/Service.php: toApiArray (L374-399), activateOrder / createFromOrder
 *    (L893-985: exception -> status failed_setup, a status note with the message, rethrown),
 *    renewFromOrder (L1157: failed_renew), suspendFromOrder (only active orders),
 *    unsuspendFromOrder, cancelFromOrder (not canceled / pending_setup / failed_setup orders),
 *    uncancelFromOrder, deleteFromOrder (force_delete logs and goes on), assertOrderUsable;
 *  - src/modules/Order/Api/Admin.php: activate, renew (pending/failed setup -> activate),
 *    suspend, unsuspend (only suspended), cancel, uncancel (only canceled), delete;
 *  - src/modules/Invoice/ServiceInvoiceItem.php executeTask (L51-91): a paid invoice activates
 *    ("setup after payment") or renews, unsuspending a suspended order first; exceptions become
 *    error_log lines and status notes;
 *  - src/modules/Cart/Service.php checkoutCart (L600-650): the order's config is the cart item:
 *    the add-to-cart request (form fields included) merged with the cart product's fields.
 */
final class StandInOrder
{
    public static function get($id): array
    {
        $order = StandInDb::state()['orders'][(string) $id] ?? null;
        if ($order === null) {
            throw new \FOSSBilling\InformationException('Order not found');
        }
        return $order;
    }

    private static function put(array $order): void
    {
        $order['updated_at'] = StandInDb::now();
        $state = &StandInDb::state();
        $state['orders'][(string) $order['id']] = $order;
    }

    public static function service(array $order): ?array
    {
        return $order['service_id'] === null ? null : (StandInDb::state()['services'][(string) $order['service_id']] ?? null);
    }

    public static function orderOfService(array $model): array
    {
        foreach (StandInDb::state()['orders'] as $order) {
            if ((string) $order['service_id'] === (string) $model['id'] && $order['service_type'] === 'custom') {
                return $order;
            }
        }
        throw new \FOSSBilling\Exception('Order not found for service');
    }

    public static function saveStatusChange(array $order, string $notes): void
    {
        $state = &StandInDb::state();
        $state['history'][] = ['order_id' => $order['id'], 'status' => $order['status'], 'notes' => $notes, 'created_at' => StandInDb::now()];
    }

    /** Cart checkout: a pending_setup order whose config is the cart item. */
    public static function checkout(array $in): array
    {
        $state = &StandInDb::state();
        $product = $state['products'][(string) $in['product_id']];
        $id = StandInDb::nextId('client_order');
        $cartProductId = StandInDb::nextId('cart_product');
        // Cart::addItem: the add-to-cart request minus id/addons ...; cartProductToApiArray merges the rest.
        $request = ['period' => $in['period']] + ($in['form'] ?? []);
        $item = array_merge($request, [
            'id' => $cartProductId,
            'product_id' => $product['id'],
            'form_id' => $product['form_id'],
            'title' => $product['title'],
            'type' => 'custom',
            'quantity' => 1,
            'unit' => 'product',
            'price' => 10.0,
            'setup_price' => 0.0,
            'discount' => 0,
            'discount_price' => 0,
            'discount_setup' => 0,
            'total' => 10.0,
        ]);
        $order = [
            'id' => $id, 'client_id' => $in['client_id'], 'product_id' => $product['id'], 'form_id' => $product['form_id'],
            'promo_id' => null, 'group_id' => $id, 'group_master' => 1, 'invoice_option' => 'issue-invoice',
            'title' => $product['title'], 'currency' => 'USD', 'unpaid_invoice_id' => null, 'service_id' => null,
            'service_type' => 'custom', 'period' => $in['period'] ?? null, 'quantity' => 1, 'unit' => 'product',
            'price' => 10.0, 'discount' => 0.0, 'status' => 'pending_setup', 'reason' => null, 'notes' => null,
            'config' => json_encode($item), 'referred_by' => null, 'expires_at' => null, 'activated_at' => null,
            'suspended_at' => null, 'unsuspended_at' => null, 'canceled_at' => null,
            'created_at' => StandInDb::now(), 'updated_at' => StandInDb::now(),
        ];
        $state['orders'][(string) $id] = $order;
        self::saveStatusChange($order, 'Order Created');
        return $order;
    }

    /** Order\Service::toApiArray($order) with no identity, as callOnAdapter calls it. */
    public static function toApiArray(array $order): array
    {
        $data = StandInDb::row($order);
        $data['config'] = json_decode($order['config'] ?? '', true) ?? [];
        $data['total'] = $order['price'] - $order['discount'];
        $data['discount'] ??= 0;
        $data['meta'] = [];
        $data['active_tickets'] = 0;
        $client = StandInDb::state()['clients'][(string) $order['client_id']];
        $data['client'] = StandInDb::row(array_intersect_key($client, array_flip([
            'id', 'email', 'email_approved', 'type', 'company', 'company_vat', 'company_number', 'first_name', 'last_name',
            'gender', 'birthday', 'phone_cc', 'phone', 'address_1', 'address_2', 'city', 'state', 'postcode', 'country',
            'currency', 'lang', 'timezone',
        ])));
        return $data;
    }

    public static function assertOrderUsable(array $order): void
    {
        if ($order['expires_at'] !== null && strtotime($order['expires_at']) <= time()) {
            throw new \FOSSBilling\InformationException('Subscription expired');
        }
    }

    private static function expiry(?string $period, ?string $from): ?string
    {
        if (empty($period)) {
            return $from;
        }
        $qty = (int) $period[0];
        $unit = ['D' => 'days', 'W' => 'weeks', 'M' => 'months', 'Y' => 'years'][strtoupper($period[1])];
        return date('Y-m-d H:i:s', strtotime("+{$qty} {$unit}", $from === null ? time() : strtotime($from)));
    }

    // ---- Order\Service flows ----------------------------------------------------------------

    public static function activateOrder(array $order, array $data = []): bool
    {
        $force = !empty($data['force']);
        if ($order['status'] === 'active' && !$force) {
            return true;
        }
        if (!in_array($order['status'], ['pending_setup', 'failed_setup'], true) && !$force) {
            throw new \FOSSBilling\Exception('Only pending setup or failed orders can be activated');
        }
        if (self::service($order) === null) {
            $model = StandInServicecustom::action_create($order);
            $order['service_id'] = $model['id'];
            self::put($order);
        }
        try {
            StandInServicecustom::action('activate', $order);
        } catch (\Exception $e) {
            $order['status'] = 'failed_setup';
            self::put($order);
            self::saveStatusChange($order, $e->getMessage());
            throw $e;
        }
        $order = self::get($order['id']);
        $order['expires_at'] = self::expiry($order['period'], $order['expires_at']);
        $order['status'] = 'active';
        $order['activated_at'] = StandInDb::now();
        $order['suspended_at'] = null;
        $order['canceled_at'] = null;
        self::put($order);
        self::saveStatusChange($order, 'Order activated');
        return true;
    }

    public static function renewFromOrder(array $order): bool
    {
        try {
            StandInServicecustom::action('renew', $order);
        } catch (\Exception $e) {
            $order['status'] = 'failed_renew';
            self::put($order);
            self::saveStatusChange($order, $e->getMessage());
            throw $e;
        }
        $order = self::get($order['id']);
        $order['expires_at'] = self::expiry($order['period'], $order['expires_at']);
        $order['status'] = 'active';
        $order['suspended_at'] = null;
        $order['unsuspended_at'] = null;
        $order['canceled_at'] = null;
        self::put($order);
        self::saveStatusChange($order, 'Order renewed');
        return true;
    }

    public static function suspendFromOrder(array $order, ?string $reason = null): bool
    {
        if ($order['status'] !== 'active') {
            throw new \FOSSBilling\InformationException('Only active orders can be suspended');
        }
        StandInServicecustom::action('suspend', $order);
        $order['status'] = 'suspended';
        $order['reason'] = $reason;
        $order['suspended_at'] = StandInDb::now();
        self::put($order);
        self::saveStatusChange($order, $reason === null ? 'Order suspended' : 'Order suspended for ' . $reason);
        return true;
    }

    public static function unsuspendFromOrder(array $order): bool
    {
        StandInServicecustom::action('unsuspend', $order);
        $order['status'] = 'active';
        $order['reason'] = null;
        $order['suspended_at'] = null;
        $order['unsuspended_at'] = StandInDb::now();
        self::put($order);
        self::saveStatusChange($order, 'Order unsuspended');
        return true;
    }

    public static function cancelFromOrder(array $order, ?string $reason = null): bool
    {
        if (in_array($order['status'], ['canceled', 'pending_setup', 'failed_setup'], true)) {
            throw new \FOSSBilling\Exception('Cannot cancel ' . $order['status'] . ' order');
        }
        StandInServicecustom::action('cancel', $order);
        $order['status'] = 'canceled';
        $order['reason'] = $reason;
        $order['canceled_at'] = StandInDb::now();
        $order['expires_at'] = null;
        $order['suspended_at'] = null;
        self::put($order);
        self::saveStatusChange($order, $reason === null ? 'Order canceled' : 'Canceled order for ' . $reason);
        return true;
    }

    public static function uncancelFromOrder(array $order): bool
    {
        StandInServicecustom::action('uncancel', $order);
        $order['status'] = 'active';
        $order['reason'] = null;
        $order['activated_at'] = StandInDb::now();
        $order['expires_at'] = self::expiry($order['period'], null);
        $order['suspended_at'] = null;
        $order['canceled_at'] = null;
        self::put($order);
        self::saveStatusChange($order, 'Activated canceled order');
        return true;
    }

    public static function deleteFromOrder(array $order, bool $force = false): bool
    {
        try {
            StandInServicecustom::action('delete', $order);
        } catch (\Exception $e) {
            if (!$force) {
                throw $e;
            }
            error_log("{$e->getMessage()} in {$e->getFile()} : {$e->getFile()}");
        }
        $state = &StandInDb::state();
        unset($state['orders'][(string) $order['id']]);
        return true;
    }

    // ---- Order\Api\Admin ---------------------------------------------------------------------

    public static function adminApi(string $method, array $data)
    {
        $order = self::get($data['id'] ?? null);
        switch ($method) {
            case 'activate':
                return self::activateOrder($order, $data);
            case 'renew':
                if (in_array($order['status'], ['pending_setup', 'failed_setup'], true)) {
                    return self::activateOrder($order, $data);
                }
                return self::renewFromOrder($order);
            case 'suspend':
                return self::suspendFromOrder($order, $data['reason'] ?? null);
            case 'unsuspend':
                if ($order['status'] !== 'suspended') {
                    throw new \FOSSBilling\InformationException('Only suspended orders can be unsuspended');
                }
                return self::unsuspendFromOrder($order);
            case 'cancel':
                return self::cancelFromOrder($order, $data['reason'] ?? null);
            case 'uncancel':
                if ($order['status'] !== 'canceled') {
                    throw new \FOSSBilling\InformationException('Only canceled orders can be uncanceled');
                }
                return self::uncancelFromOrder($order);
            case 'delete':
                return self::deleteFromOrder($order, !empty($data['force_delete']));
        }
        throw new \FOSSBilling\Exception(':type API call :method does not exist in module :module', [':type' => 'Admin', ':method' => $method, ':module' => 'order'], 740);
    }

    // ---- Invoice\ServiceInvoiceItem::executeTask --------------------------------------------

    public static function invoicePaid(array $order, string $task): void
    {
        if ($task === 'activate') {
            try {
                self::activateOrder($order);
            } catch (\Exception $e) {
                error_log($e->getMessage());
                self::saveStatusChange(self::get($order['id']), "Order could not be activated due to error: {$e->getMessage()}.");
            }
            return;
        }
        try {
            if ($order['status'] === 'suspended') {
                self::unsuspendFromOrder($order);
            }
            self::renewFromOrder(self::get($order['id']));
        } catch (\Exception $e) {
            error_log($e->getMessage());
            self::saveStatusChange(self::get($order['id']), "Order could not renew due to error: {$e->getMessage()}.");
        }
    }
}
