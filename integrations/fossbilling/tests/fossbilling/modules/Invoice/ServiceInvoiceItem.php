<?php

declare(strict_types=1);

namespace Box\Mod\Invoice;

/**
 * STAND-IN (test only) for ServiceInvoiceItem::executeTask, src/modules/Invoice/ServiceInvoiceItem.php
 * of FOSSBilling 0.8.5 (L51-91): a paid invoice item of an order
 *  - "activate": activates the order when its product is set up "after payment"; an exception
 *    is logged and noted on the order, not thrown;
 *  - "renew": unsuspends a suspended order first, then renews it; an exception likewise.
 */
class ServiceInvoiceItem implements \FOSSBilling\InjectionAwareInterface
{
    protected ?\Pimple\Container $di = null;

    public function setDi(\Pimple\Container $di): void
    {
        $this->di = $di;
    }

    public function executeTask(int $orderId, string $task): void
    {
        $order = $this->di['db']->load('ClientOrder', $orderId);
        if (!$order instanceof \Model_ClientOrder) {
            throw new \FOSSBilling\Exception('Could not activate proforma item. Order :id not found', [':id' => $orderId]);
        }
        $orderService = $this->di['mod_service']('Order');
        if ($task === 'activate') {
            $product = $this->di['mod_service']('Product')->findProductById((int) $order->product_id);
            if ($product->getSetup() == \Box\Mod\Product\Service::SETUP_AFTER_PAYMENT) {
                try {
                    $orderService->activateOrder($order);
                } catch (\Exception $e) {
                    error_log($e->getMessage());
                    $orderService->saveStatusChange($order, "Order could not be activated due to error: {$e->getMessage()}.");
                }
            }

            return;
        }
        try {
            if ($order->status == \Model_ClientOrder::STATUS_SUSPENDED) {
                $orderService->unsuspendFromOrder($order);
            }
            $order = $this->di['db']->load('ClientOrder', $orderId);
            $orderService->renewOrder($order);
        } catch (\Exception $e) {
            error_log($e->getMessage());
            $orderService->saveStatusChange($order, "Order could not renew due to error: {$e->getMessage()}.");
        }
    }
}
