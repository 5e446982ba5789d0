<?php

declare(strict_types=1);

/**
 * STAND-IN (test only) for the RedBean models of src/library/Model/ (FOSSBilling 0.8.5) that the
 * order flows use: ClientOrder's status and action constants (Model/ClientOrder.php L13-27), and
 * plain models for Client, Admin and ServiceCustom.
 */
class Model_ClientOrder extends RedBeanPHP\SimpleModel
{
    final public const STATUS_PENDING_SETUP = 'pending_setup';
    final public const STATUS_FAILED_SETUP = 'failed_setup';
    final public const STATUS_FAILED_RENEW = 'failed_renew';
    final public const STATUS_ACTIVE = 'active';
    final public const STATUS_CANCELED = 'canceled';
    final public const STATUS_SUSPENDED = 'suspended';

    final public const ACTION_CREATE = 'create';
    final public const ACTION_ACTIVATE = 'activate';
    final public const ACTION_RENEW = 'renew';
    final public const ACTION_SUSPEND = 'suspend';
    final public const ACTION_UNSUSPEND = 'unsuspend';
    final public const ACTION_CANCEL = 'cancel';
    final public const ACTION_UNCANCEL = 'uncancel';
    final public const ACTION_DELETE = 'delete';
}

class Model_Client extends RedBeanPHP\SimpleModel
{
}

class Model_Admin extends RedBeanPHP\SimpleModel
{
}

class Model_ServiceCustom extends RedBeanPHP\SimpleModel
{
}
