<?php
/**
 * A stand-in for the parts of WHMCS the License Bridge server module uses, for php-cli tests.
 * Not shipped: it lives outside modules/servers/licensebridge/.
 *
 * Built from WHMCS's developer documentation and its sample provisioning module
 * (github.com/WHMCS/sample-provisioning-module, tests/_bootstrap.php): the WHMCS constant,
 * logModuleCall() with its six documented arguments, logActivity(), add_hook() and localAPI()
 * for the sample hook file (includes/hooks/), and the `model` passed in
 * $params (WHMCS\Service\Service or WHMCS\Service\Addon, Eloquent models with attributes read
 * as properties or array keys, and `serviceProperties` with save()/get(); "Service Properties",
 * developers.whmcs.com/provisioning-modules/service-properties/).
 *
 * Every logModuleCall is appended, as WHMCS received it (before any masking), to the file named
 * by LB_LOG_FILE, one JSON object a line.
 */

namespace {
    define('WHMCS', true);

    /** WHMCS's module log call (developers.whmcs.com/provisioning-modules/module-logging/). */
    function logModuleCall($module, $action, $requestString, $responseData, $processedData = '', $replaceVars = [])
    {
        standin_log([
            'kind' => 'logModuleCall',
            'module' => $module,
            'action' => $action,
            'request' => $requestString,
            'response' => $responseData,
            'processed' => $processedData,
            'replaceVars' => $replaceVars,
        ]);
    }

    function logActivity($message, $userId = 0)
    {
        standin_log(['kind' => 'logActivity', 'message' => $message, 'userId' => $userId]);
    }

    /** WHMCS's hook registration (developers.whmcs.com, Hooks: "Getting Started"). */
    function add_hook($hookPoint, $priority, $function)
    {
        $GLOBALS['standin_hooks'][(string) $hookPoint][] = ['priority' => (int) $priority, 'function' => $function];
    }

    /** Runs a hook point as WHMCS does: each registered function by priority, with the point's variables. */
    function standin_run_hook(string $hookPoint, array $vars): void
    {
        $hooks = $GLOBALS['standin_hooks'][$hookPoint] ?? [];
        usort($hooks, static fn ($a, $b) => $a['priority'] <=> $b['priority']);
        foreach ($hooks as $hook) {
            ($hook['function'])($vars);
        }
    }

    /**
     * WHMCS's internal API (developers.whmcs.com, "Internal API"): answers from the fixture in
     * $GLOBALS['standin_api'] ({"GetClientsProducts": {"<serviceid>": {..}}, "GetInvoice":
     * {"<invoiceid>": {..}}}), in the documented response shapes.
     */
    function localAPI($command, $values = [], $adminUser = null)
    {
        $GLOBALS['standin_api_calls'][] = ['command' => $command, 'values' => $values];
        $data = $GLOBALS['standin_api'][$command] ?? [];
        if ($command === 'GetClientsProducts') {
            $product = $data[(string) ($values['serviceid'] ?? '')] ?? null;
            return ['result' => 'success', 'totalresults' => $product ? 1 : 0, 'numreturned' => $product ? 1 : 0,
                'products' => $product ? ['product' => [$product]] : []];
        }
        if ($command === 'GetInvoice') {
            $invoice = $data[(string) ($values['invoiceid'] ?? '')] ?? null;
            return $invoice ? ['result' => 'success'] + $invoice : ['result' => 'error', 'message' => 'Invoice ID Not Found'];
        }
        return ['result' => 'error', 'message' => 'the stand-in does not answer ' . $command];
    }

    function standin_log(array $entry): void
    {
        $GLOBALS['standin_log'][] = $entry;
        $file = getenv('LB_LOG_FILE');
        if ($file) {
            file_put_contents($file, json_encode($entry, JSON_UNESCAPED_SLASHES | JSON_PARTIAL_OUTPUT_ON_ERROR) . "\n", FILE_APPEND);
        }
    }
}

namespace WHMCS\Service {
    /**
     * The stand-in's Eloquent-like model: attributes as properties and as array keys
     * ($params['model']->nextduedate, $params['model']['orderid']).
     */
    abstract class StandInModel implements \ArrayAccess
    {
        public Properties $serviceProperties;

        public function __construct(private array $attributes, array $customFields = [])
        {
            $this->serviceProperties = new Properties($this, $customFields);
        }

        public function __get(string $name): mixed
        {
            return $this->attributes[$name] ?? null;
        }

        public function __set(string $name, mixed $value): void
        {
            $this->attributes[$name] = $value;
        }

        public function __isset(string $name): bool
        {
            return isset($this->attributes[$name]);
        }

        public function offsetExists(mixed $offset): bool
        {
            return isset($this->attributes[$offset]);
        }

        public function offsetGet(mixed $offset): mixed
        {
            return $this->attributes[$offset] ?? null;
        }

        public function offsetSet(mixed $offset, mixed $value): void
        {
            $this->attributes[$offset] = $value;
        }

        public function offsetUnset(mixed $offset): void
        {
            unset($this->attributes[$offset]);
        }

        public function attributes(): array
        {
            return $this->attributes;
        }
    }

    /** tblhosting: a product service. */
    final class Service extends StandInModel
    {
    }

    /** tblhostingaddons: a product addon (id, addonid = tbladdons.id, hostingid = the parent service). */
    final class Addon extends StandInModel
    {
    }

    /**
     * Service Properties: on a service the names "Dedicated IP", "Domain", "Username", ... go to the
     * core fields; anything else, and everything on an addon, to a custom field of that name.
     */
    final class Properties
    {
        private const CORE = ['Dedicated IP' => 'dedicatedip', 'Domain' => 'domain', 'Username' => 'username', 'Password' => 'password'];

        /** Every save, in order, for the test to read. */
        public array $saved = [];

        public function __construct(private StandInModel $model, private array $customFields)
        {
        }

        public function save(array $properties): void
        {
            foreach ($properties as $name => $value) {
                $core = $this->model instanceof Service ? (self::CORE[$name] ?? null) : null;
                if ($core !== null) {
                    $this->model->{$core} = $value;
                } else {
                    $this->customFields[$name] = $value;
                }
                $this->saved[] = ['name' => $name, 'value' => $value, 'stored_in' => $core ?? 'custom field'];
            }
        }

        public function get(string $name): mixed
        {
            $core = $this->model instanceof Service ? (self::CORE[$name] ?? null) : null;
            return $core !== null ? $this->model->{$core} : ($this->customFields[$name] ?? null);
        }
    }
}
