<?php

declare(strict_types=1);

namespace Box\Mod\Cart;

/**
 * STAND-IN (test only) for the checkout of src/modules/Cart/Service.php, FOSSBilling 0.8.5 (commit
 * 544bf2b8), one product at a time:
 *  - addItem (L101-220): a recurrently priced product needs one of its periods; the rest of the
 *    request (the order form's fields) is the item's config, through the product type's
 *    attachOrderConfig / validateOrderData (Product\Service::prepareCartProductConfig); their
 *    exception refuses the item;
 *  - createFromCart (L551-700): the order is pending_setup, its service_type the product's type,
 *    its config the item's config, its period the chosen one.
 * No invoice, no activation: the test then pays the invoice or activates as an admin.
 */
class Service implements \FOSSBilling\InjectionAwareInterface
{
    protected ?\Pimple\Container $di = null;

    public function setDi(\Pimple\Container $di): void
    {
        $this->di = $di;
    }

    public function checkout(\Model_Client $client, int $productId, array $data): \Model_ClientOrder
    {
        $productService = $this->di['mod_service']('product');
        $product = $productService->findProductById($productId);
        $periods = $product->getPeriods();
        if ($periods !== []) {
            if (!isset($data['period'])) {
                throw new \FOSSBilling\InformationException('Period parameter not passed');
            }
            if (!in_array($data['period'], $periods, true)) {
                throw new \FOSSBilling\InformationException('Selected billing period is invalid');
            }
        }
        unset($data['id'], $data['addons']);
        $config = $productService->prepareCartProductConfig($product, $data);

        $order = $this->di['db']->dispense('ClientOrder');
        $order->client_id = $client->id;
        $order->product_id = $product->getId();
        $order->title = $product->getTitle();
        $order->currency = 'USD';
        $order->service_type = $product->getType();
        $order->service_id = null;
        $order->period = $data['period'] ?? null;
        $order->quantity = 1;
        $order->price = 10;
        $order->status = \Model_ClientOrder::STATUS_PENDING_SETUP;
        $order->config = json_encode($config);
        $order->expires_at = null;
        $order->created_at = date('Y-m-d H:i:s');
        $order->updated_at = date('Y-m-d H:i:s');
        $this->di['db']->store($order);
        $this->di['mod_service']('order')->saveStatusChange($order, 'Order created');

        return $order;
    }
}
