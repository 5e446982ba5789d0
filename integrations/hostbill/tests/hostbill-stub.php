<?php
/**
 * A minimal stand-in for the parts of HostBill the License Bridge module touches, for php-cli
 * tests. NOT shipped with the module (it lives outside includes/).
 *
 * HostBill's own core (includes/core/class.hostingmodule.php and friends) is ionCube-encoded, so
 * this is built from what HostBill's sample modules and real modules show (integrations/hostbill/
 * README.md, "Sources"):
 *  - the constants DS, APPDIR and APPDIR_MODULES (real modules build template paths from the last);
 *  - HostingModule: a constructor, protected $options / $details / $serverFields /
 *    $serverFieldsDescription / $commands / $modname / $version / $description; the account data in
 *    $account_details, $client_data, $product_details, $account_config (kept protected here, the
 *    strictest choice: a module that works with these works whatever HostBill really declares);
 *    public $connection; addError() / addInfo(); getAccount();
 *  - HostingWidget (client functions) and HBController (user/ controllers) with $module and
 *    $template (assign / render);
 *  - hbm_log_system() / hbm_log_error(), HostBill's log functions, here writing to a sink the tests read.
 *
 * Methods named hb*() are HostBill's side of the contract (its loader filling the properties,
 * and its reading of errors, infos and the account fields to save); a module must never call them.
 */

define('DS', DIRECTORY_SEPARATOR);
define('APPDIR', dirname(__DIR__) . DS . 'includes' . DS);
define('APPDIR_MODULES', APPDIR . 'modules' . DS);

/** Everything the module wrote to HostBill's logs. */
$GLOBALS['hb_stub_log'] = [];

function hbm_log_system($message, $module = '')
{
    $GLOBALS['hb_stub_log'][] = ['level' => 'system', 'module' => (string) $module, 'message' => (string) $message];
}

function hbm_log_error($message, $module = '')
{
    $GLOBALS['hb_stub_log'][] = ['level' => 'error', 'module' => (string) $module, 'message' => (string) $message];
}

abstract class HostingModule
{
    protected $modname = '';
    protected $version = '';
    protected $description = '';
    protected $options = [];
    protected $details = [];
    protected $serverFields = [];
    protected $serverFieldsDescription = [];
    protected $commands = [];

    protected $account_details = [];
    protected $client_data = [];
    protected $product_details = [];
    protected $account_config = [];

    public $connection = [];

    private $hbErrors = [];
    private $hbInfos = [];

    public function __construct()
    {
    }

    protected function addError($message)
    {
        $this->hbErrors[] = (string) $message;
    }

    protected function addInfo($message)
    {
        $this->hbInfos[] = (string) $message;
    }

    public function getAccount()
    {
        return $this->account_details;
    }

    // ---- HostBill's side -------------------------------------------------------------------

    /** What HostBill loads before calling the module: stored values into the declared fields. */
    public function hbLoad(array $s): void
    {
        foreach (['options', 'details'] as $bag) {
            foreach ($s[$bag] ?? [] as $key => $value) {
                if (isset($this->{$bag}[$key])) {
                    $this->{$bag}[$key]['value'] = $value;
                }
            }
        }
        $this->account_details = $s['account'] ?? [];
        $this->client_data = $s['client'] ?? [];
        $this->product_details = $s['product'] ?? [];
        $this->account_config = $s['account_config'] ?? [];
    }

    public function hbErrors(): array
    {
        return $this->hbErrors;
    }

    public function hbInfos(): array
    {
        return $this->hbInfos;
    }

    /** The account fields as HostBill would save them after the call. */
    public function hbDetails(): array
    {
        $out = [];
        foreach ($this->details as $key => $field) {
            $out[$key] = $field['value'] ?? null;
        }
        return $out;
    }

    /** What the admin area shows from the module's declarations. */
    public function hbDescribe(): array
    {
        $names = fn (array $bag) => array_map(fn ($f) => ['name' => $f['name'] ?? null, 'type' => $f['type'] ?? null, 'value' => $f['value'] ?? null], $bag);
        return [
            'class' => static::class,
            'modname' => $this->modname,
            'version' => $this->version,
            'description' => $this->description,
            'serverFields' => $this->serverFields,
            'serverFieldsDescription' => $this->serverFieldsDescription,
            'options' => $names($this->options),
            'details' => $names($this->details),
        ];
    }
}

abstract class HostingWidget
{
    protected $description = '';
    protected $widgetfullname = '';
    protected $config = [];

    public function __construct()
    {
    }

    public function hbDescribe(): array
    {
        return ['description' => $this->description, 'widgetfullname' => $this->widgetfullname];
    }
}

/** The Smarty wrapper a controller gets as $this->template: records what it is given. */
final class HBStubTemplate
{
    public array $assigned = [];
    public array $rendered = [];

    public function assign($name, $value = null)
    {
        $this->assigned[$name] = $value;
    }

    public function render($path)
    {
        $this->rendered[] = (string) $path;
    }
}

class HBController
{
    public $module;
    public $template;
}
