<?php
/**
 * A stand-in for the parts of Blesta a module touches, for running the License Bridge module
 * with php-cli in tests. NOT part of the module (never copy this folder into Blesta).
 *
 * Faithful to what Blesta gives a module (research notes, Part A; Blesta's own module skeleton in
 * blesta/plugin-extension_generator lib/templates/module/; the base class and core models of
 * Blesta 5.8.2 as summarised there):
 *  - Module: config.json, module/row setters and getters (getModuleRow($id) checks the row belongs
 *    to the module), errors() returning Input::errors(), setMessage/getMessages,
 *    serviceFieldsToObject, log() writing Logs::addModule with an 8-character group per instance
 *    and throwing when the log refuses the line.
 *  - Input: setRules/validates/setErrors/errors, rules as Blesta writes them ('rule' => bool,
 *    'isEmpty', ['in_array', [...]], [[$object, 'method'], ...args], 'negate', 'if_set'), fields
 *    named "meta[key]"; errors nested ['field' => ['rule' => 'message']]; errors() is false
 *    when there are none.
 *  - ModuleFields/ModuleField, View (views/<dir>/<file>.pdt under setDefaultView()), the Form, Html
 *    and Widget helpers, Language (language/<lang>/<file>.php, Language::_($key, $return, ...$args)),
 *    Loader, Configure.
 *  - Models backed by a JSON file standing for Blesta's database: ModuleManager (rows with
 *    encrypted meta, handed to modules decrypted), Packages (meta as stdClass, pricing list),
 *    Services (get() with fields decrypted, package, package_pricing), Clients, Logs.
 *  - BlestaCore: the calling code, i.e. what Services::add/edit/suspend/unsuspend/cancel/renew,
 *    ModuleManager::addRow/editRow, the ProvisionPendingServices task, the renewal invoicing and
 *    ClientServices::processModuleTab do around each module call (see blesta.php).
 */

if (!defined('DS')) {
    define('DS', DIRECTORY_SEPARATOR);
}
// ROOTDIR is Blesta's install directory: here integrations/blesta/, which holds components/modules/.
if (!defined('ROOTDIR')) {
    define('ROOTDIR', dirname(__DIR__) . DS);
}
if (!defined('COMPONENTDIR')) {
    define('COMPONENTDIR', ROOTDIR . 'components' . DS);
}

/** The JSON file standing for Blesta's database. */
final class BlestaDb
{
    public static string $path = '';
    public static array $data = [];
    /** Module log lines written during this run. */
    public static array $newLogs = [];

    public static function load(string $path): void
    {
        self::$path = $path;
        self::$data = is_file($path) ? (json_decode((string) file_get_contents($path), true) ?: []) : [];
        self::$data += [
            'modules' => [['id' => 1, 'class' => 'license_bridge', 'name' => 'License Bridge', 'company_id' => 1]],
            'module_rows' => [],
            'module_groups' => [],
            'packages' => [],
            'clients' => [],
            'services' => [],
            'logs' => [],
            'next_id' => 1,
        ];
    }

    public static function save(): void
    {
        file_put_contents(self::$path, json_encode(self::$data, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES));
    }

    public static function nextId(): int
    {
        return self::$data['next_id']++;
    }

    /** Blesta encrypts with the system key; the stand-in only needs the stored form to differ from the value. */
    public static function encrypt(string $value): string
    {
        return 'enc:' . base64_encode(strrev($value) ^ str_repeat("\x5a", strlen($value)));
    }

    public static function decrypt(string $value): string
    {
        if (strncmp($value, 'enc:', 4) !== 0) {
            return $value;
        }
        $raw = (string) base64_decode(substr($value, 4));

        return strrev($raw ^ str_repeat("\x5a", strlen($raw)));
    }

    /** Stored meta/fields list (Blesta's rows: key, value, serialized, encrypted) from a module's return list. */
    public static function storeList(array $list): array
    {
        $out = [];
        foreach ($list as $item) {
            $item = (array) $item;
            $value = $item['value'] ?? null;
            $serialized = 0;
            if (!is_scalar($value) && $value !== null) {
                $value = serialize($value);
                $serialized = 1;
            }
            $encrypted = !empty($item['encrypted']) && $item['encrypted'] !== 'false' ? 1 : 0;
            $value = $value === null ? null : (string) $value;
            $out[] = [
                'key' => (string) $item['key'],
                'value' => $encrypted && $value !== null ? self::encrypt($value) : $value,
                'serialized' => $serialized,
                'encrypted' => $encrypted,
            ];
        }

        return $out;
    }

    /** A stored list decrypted and unserialized, as Blesta hands it to modules. */
    public static function readList(array $list): array
    {
        $out = [];
        foreach ($list as $item) {
            $value = $item['value'];
            if (!empty($item['encrypted']) && $value !== null) {
                $value = self::decrypt($value);
            }
            if (!empty($item['serialized']) && $value !== null) {
                $value = unserialize($value);
            }
            $out[] = (object) ['key' => $item['key'], 'value' => $value, 'serialized' => $item['serialized'] ?? 0, 'encrypted' => $item['encrypted'] ?? 0];
        }

        return $out;
    }

    public static function meta(array $list): stdClass
    {
        $meta = new stdClass();
        foreach (self::readList($list) as $item) {
            $meta->{$item->key} = $item->value;
        }

        return $meta;
    }
}

final class Configure
{
    private static array $values = ['Blesta.company_id' => 1];

    public static function get($key)
    {
        return self::$values[$key] ?? null;
    }

    public static function set($key, $value): void
    {
        self::$values[$key] = $value;
    }

    public static function load($file, $dir = null): void
    {
        $path = ($dir ?? '') . $file . '.php';
        if (is_file($path)) {
            include $path;
        }
    }
}

final class Language
{
    private static array $lang = [
        'AdminCompanyModules.manage.boxtitle_manage' => 'Manage %1$s',
        'AppController.tooltip.text' => 'Tooltip',
        'AppController.modal.text_close' => 'Close',
    ];
    public static string $current = 'en_us';

    public static function loadLang($lang_file, $language = null, $lang_dir = null): void
    {
        $language = $language ?: self::$current;
        foreach ((array) $lang_file as $file) {
            $path = $lang_dir . $language . DS . $file . '.php';
            if (!is_file($path)) {
                continue;
            }
            $lang = [];
            include $path;
            self::$lang = array_merge(self::$lang, $lang);
        }
    }

    public static function _($lang_key, $return = false, ...$args)
    {
        $text = self::$lang[$lang_key] ?? $lang_key;
        if ($args) {
            $text = vsprintf($text, $args);
        }
        if ($return) {
            return $text;
        }
        echo $text;

        return null;
    }

    public static function has($key): bool
    {
        return isset(self::$lang[$key]);
    }
}

final class Loader
{
    public static function loadComponents($parent, $components): void
    {
        foreach ((array) $components as $component) {
            if ($component === 'Input') {
                $parent->Input = new Input();
            }
        }
    }

    public static function loadModels($parent, $models): void
    {
        foreach ((array) $models as $model) {
            $parent->{$model} = new $model();
        }
    }

    public static function loadHelpers($parent, $helpers): void
    {
        foreach ((array) $helpers as $helper) {
            $parent->{$helper} = new $helper();
            // Blesta adds a module's helpers to the view loaded into it.
            if (isset($parent->view) && $parent->view instanceof View) {
                $parent->view->{$helper} = $parent->{$helper};
            }
        }
    }

    public static function load($path): bool
    {
        return (bool) require_once $path;
    }

    public static function toCamelCase($str): string
    {
        return str_replace(' ', '', ucwords(str_replace('_', ' ', (string) $str)));
    }

    public static function fromCamelCase($str): string
    {
        return strtolower((string) preg_replace('/(?<!^)[A-Z]/', '_$0', (string) $str));
    }
}

#[\AllowDynamicProperties]
class Input
{
    private array $rules = [];
    private array $errors = [];

    public function setRules(array $rules): void
    {
        $this->rules = $rules;
    }

    public function setErrors(array $errors): void
    {
        $this->errors = $errors;
    }

    /** False when there are no errors, as Blesta's callers test it. */
    public function errors()
    {
        return empty($this->errors) ? false : $this->errors;
    }

    public function isEmpty($str): bool
    {
        return $str === null || (is_string($str) && trim($str) === '') || $str === [];
    }

    public function validates(array &$data): bool
    {
        $this->errors = [];
        foreach ($this->rules as $field => $rules) {
            [$set, $value] = self::lookup($data, $field);
            foreach ($rules as $name => $rule) {
                if (!empty($rule['if_set']) && !$set) {
                    continue;
                }
                $ok = $this->check($rule['rule'] ?? true, $value);
                if (!empty($rule['negate'])) {
                    $ok = !$ok;
                }
                if (!$ok) {
                    $this->errors[$field][$name] = $rule['message'] ?? ($field . ' ' . $name);
                    if (!empty($rule['last'])) {
                        break;
                    }
                }
            }
        }

        return empty($this->errors);
    }

    private function check($rule, $value): bool
    {
        if (is_bool($rule)) {
            return $rule;
        }
        if (is_string($rule)) {
            return method_exists($this, $rule) ? (bool) $this->{$rule}($value) : (bool) $rule($value);
        }
        if ($rule instanceof Closure) {
            return (bool) $rule($value);
        }
        if (is_array($rule) && $rule) {
            $callable = array_shift($rule);
            if (is_string($callable) && method_exists($this, $callable)) {
                $callable = [$this, $callable];
            }
            return (bool) call_user_func_array($callable, array_merge([$value], $rule));
        }

        throw new InvalidArgumentException('unsupported rule');
    }

    /** A field named "meta[key]" is $data['meta']['key']. */
    private static function lookup(array $data, string $field): array
    {
        $path = preg_split('/[\[\]]+/', $field, -1, PREG_SPLIT_NO_EMPTY);
        $node = $data;
        foreach ($path as $part) {
            if (!is_array($node) || !array_key_exists($part, $node)) {
                return [false, null];
            }
            $node = $node[$part];
        }

        return [true, $node];
    }
}

class ModuleField
{
    public string $type;
    public array $params = [];
    public array $fields = [];
    public ?ModuleField $label = null;

    public function __construct(string $type)
    {
        $this->type = $type;
    }

    public function setParam($name, $value): void
    {
        $this->params[$name] = $value;
    }

    public function setLabel(ModuleField $label): void
    {
        $this->label = $label;
    }

    public function attach(ModuleField $field): void
    {
        $this->fields[] = $field;
    }
}

class ModuleFields
{
    private array $fields = [];
    private ?string $html = null;

    public function label($name, $for = null, array $attributes = [], $preserve_tags = false)
    {
        $field = new ModuleField('label');
        $field->setParam('name', $name);
        $field->setParam('for', $for);
        $field->setParam('attributes', $attributes);

        return $field;
    }

    public function tooltip($message)
    {
        $field = new ModuleField('tooltip');
        $field->setParam('message', $message);

        return $field;
    }

    public function fieldText($name, $value = null, $attributes = [], ?ModuleField $label = null)
    {
        return $this->input('fieldText', $name, $value, $attributes, $label);
    }

    public function fieldPassword($name, $attributes = [], ?ModuleField $label = null)
    {
        return $this->input('fieldPassword', $name, null, $attributes, $label);
    }

    public function fieldHidden($name, $value = null, $attributes = [])
    {
        return $this->input('fieldHidden', $name, $value, $attributes, null);
    }

    public function fieldSelect($name, $options = [], $selected_value = null, $attributes = [], $option_attributes = [], ?ModuleField $label = null)
    {
        $field = $this->input('fieldSelect', $name, $selected_value, $attributes, $label);
        $field->setParam('options', $options);

        return $field;
    }

    public function fieldCheckbox($name, $value = null, $checked = false, $attributes = [], ?ModuleField $label = null)
    {
        $field = $this->input('fieldCheckbox', $name, $value, $attributes, $label);
        $field->setParam('checked', $checked);

        return $field;
    }

    public function setField(ModuleField $field): void
    {
        $this->fields[] = $field;
    }

    public function getFields(): array
    {
        return $this->fields;
    }

    public function setHtml($html): void
    {
        $this->html = $html;
    }

    public function getHtml(): ?string
    {
        return $this->html;
    }

    private function input(string $type, $name, $value, $attributes, ?ModuleField $label): ModuleField
    {
        $field = new ModuleField($type);
        $field->setParam('name', $name);
        $field->setParam('value', $value);
        $field->setParam('attributes', $attributes);
        if ($label) {
            $field->setLabel($label);
        }

        return $field;
    }

    /** What a Blesta page shows of these fields: [{name, type, value, label, tooltip}]. */
    public static function describe(ModuleFields $fields): array
    {
        $out = [];
        foreach ($fields->getFields() as $field) {
            if ($field->type === 'label') {
                $tooltip = null;
                foreach ($field->fields as $inner) {
                    if ($inner->type === 'tooltip') {
                        $tooltip = $inner->params['message'];
                    }
                }
                foreach ($field->fields as $inner) {
                    if ($inner->type !== 'tooltip') {
                        $out[] = ['name' => $inner->params['name'], 'type' => $inner->type, 'value' => $inner->params['value'] ?? null,
                            'label' => $field->params['name'], 'tooltip' => $tooltip];
                    }
                }
            } else {
                $out[] = ['name' => $field->params['name'] ?? null, 'type' => $field->type, 'value' => $field->params['value'] ?? null,
                    'label' => null, 'tooltip' => null];
            }
        }

        return $out;
    }
}

#[\AllowDynamicProperties]
class View
{
    public $file;
    public $view;
    public $default_view = '';
    public $base_uri = '';
    private array $vars = [];

    public function __construct($file = null, $view = null)
    {
        $this->file = $file;
        $this->view = $view ?? 'default';
    }

    public function setDefaultView($path): void
    {
        $this->default_view = $path;
    }

    public function setView($file = null, $view = null): void
    {
        if ($file !== null) {
            $this->file = $file;
        }
        if ($view !== null) {
            $this->view = $view;
        }
    }

    public function set($name, $value = null): void
    {
        $this->vars[$name] = $value;
    }

    public function _($key, $return = false, ...$args)
    {
        return Language::_($key, $return, ...$args);
    }

    public function fetch($file = null, $view = null): string
    {
        $this->setView($file, $view);
        $path = ROOTDIR . $this->default_view . 'views' . DS . $this->view . DS . $this->file . '.pdt';
        if (!is_file($path)) {
            throw new RuntimeException('view not found: ' . $path);
        }
        extract($this->vars);
        ob_start();
        include $path;

        return (string) ob_get_clean();
    }
}

class Html
{
    public function safe($str, $preserve_tags = false)
    {
        return htmlspecialchars((string) $str, ENT_QUOTES, 'UTF-8');
    }

    public function _($str, $return = false)
    {
        $safe = $this->safe($str);
        if ($return) {
            return $safe;
        }
        echo $safe;

        return null;
    }

    public function ifSet($var, $default = '')
    {
        return isset($var) ? $var : $default;
    }
}

class Form
{
    private function attrs(array $attributes): string
    {
        $out = '';
        foreach ($attributes as $name => $value) {
            $out .= ' ' . $name . '="' . htmlspecialchars((string) $value, ENT_QUOTES, 'UTF-8') . '"';
        }

        return $out;
    }

    private function out(string $html, $return)
    {
        if ($return) {
            return $html;
        }
        echo $html;

        return null;
    }

    public function create($action = null, array $attributes = [], $return = false)
    {
        // Blesta adds its CSRF token to every form it creates.
        return $this->out('<form method="post"' . ($action !== null ? ' action="' . htmlspecialchars((string) $action, ENT_QUOTES, 'UTF-8') . '"' : '')
            . $this->attrs($attributes) . '><input type="hidden" name="_csrf_token" value="csrf" />', $return);
    }

    public function end($attributes = [], $return = false)
    {
        return $this->out('</form>', $return);
    }

    public function label($name, $for = null, array $attributes = [], $preserve_tags = false, $return = false)
    {
        return $this->out('<label for="' . htmlspecialchars((string) $for, ENT_QUOTES, 'UTF-8') . '"' . $this->attrs($attributes) . '>'
            . htmlspecialchars((string) $name, ENT_QUOTES, 'UTF-8') . '</label>', $return);
    }

    public function fieldText($name, $value = null, array $attributes = [], $return = false)
    {
        return $this->out('<input type="text" name="' . $name . '" value="' . htmlspecialchars((string) $value, ENT_QUOTES, 'UTF-8') . '"'
            . $this->attrs($attributes) . ' />', $return);
    }

    public function fieldPassword($name, array $attributes = [], $return = false)
    {
        return $this->out('<input type="password" name="' . $name . '"' . $this->attrs($attributes) . ' />', $return);
    }

    public function fieldHidden($name, $value = null, array $attributes = [], $return = false)
    {
        return $this->out('<input type="hidden" name="' . $name . '" value="' . htmlspecialchars((string) $value, ENT_QUOTES, 'UTF-8') . '"'
            . $this->attrs($attributes) . ' />', $return);
    }

    public function fieldSelect($name, $options = [], $selected_value = null, array $attributes = [], array $option_attributes = [], $return = false)
    {
        $html = '<select name="' . $name . '"' . $this->attrs($attributes) . '>';
        foreach ((array) $options as $value => $text) {
            $html .= '<option value="' . htmlspecialchars((string) $value, ENT_QUOTES, 'UTF-8') . '"'
                . ((string) $value === (string) $selected_value ? ' selected="selected"' : '') . '>'
                . htmlspecialchars((string) $text, ENT_QUOTES, 'UTF-8') . '</option>';
        }

        return $this->out($html . '</select>', $return);
    }

    public function fieldSubmit($name, $value = null, array $attributes = [], $return = false)
    {
        return $this->out('<input type="submit" name="' . $name . '" value="' . htmlspecialchars((string) $value, ENT_QUOTES, 'UTF-8') . '"'
            . $this->attrs($attributes) . ' />', $return);
    }
}

class Widget
{
    public function clear(): void
    {
    }

    public function setLinkButtons(array $buttons): void
    {
        foreach ($buttons as $button) {
            echo '<a class="btn" href="' . htmlspecialchars((string) ($button['attributes']['href'] ?? ''), ENT_QUOTES, 'UTF-8') . '">'
                . htmlspecialchars((string) $button['name'], ENT_QUOTES, 'UTF-8') . '</a>';
        }
    }

    public function create($title = null, array $attributes = [], $render = null): void
    {
        echo '<div class="widget"><h2>' . htmlspecialchars((string) $title, ENT_QUOTES, 'UTF-8') . '</h2>';
    }

    public function end(): void
    {
        echo '</div>';
    }
}

// ------------------------------------------------------------------------------------------
// Models over the JSON database
// ------------------------------------------------------------------------------------------

class Logs
{
    private array $errors = [];

    public function addModule(array $vars): void
    {
        $line = [
            'staff_id' => $vars['staff_id'] ?? null,
            'module_id' => $vars['module_id'] ?? null,
            'direction' => $vars['direction'] ?? 'input',
            'url' => $vars['url'] ?? null,
            'data' => $vars['data'] ?? null,
            'status' => $vars['status'] ?? 'error',
            'group' => $vars['group'] ?? null,
            'date_added' => gmdate('Y-m-d H:i:s'),
        ];
        BlestaDb::$data['logs'][] = $line;
        BlestaDb::$newLogs[] = $line;
    }

    public function errors()
    {
        return empty($this->errors) ? false : $this->errors;
    }
}

class Clients
{
    public function get($client_id, $get_settings = true)
    {
        foreach (BlestaDb::$data['clients'] as $client) {
            if ((string) $client['id'] === (string) $client_id) {
                if (!empty($client['broken'])) {
                    // A failure deep in Blesta (e.g. the database went away) surfaces as an exception.
                    throw new RuntimeException('SQLSTATE[HY000]: General error: 2006 MySQL server has gone away');
                }
                return (object) $client;
            }
        }

        return false;
    }
}

class ModuleManager
{
    public function getRow($module_row_id)
    {
        foreach (BlestaDb::$data['module_rows'] as $row) {
            if ((string) $row['id'] === (string) $module_row_id) {
                return (object) ['id' => $row['id'], 'module_id' => $row['module_id'], 'meta' => BlestaDb::meta($row['meta'])];
            }
        }

        return false;
    }

    public function getRows($module_id, $module_group_id = null): array
    {
        $rows = [];
        foreach (BlestaDb::$data['module_rows'] as $row) {
            if ((string) $row['module_id'] === (string) $module_id) {
                $rows[] = $this->getRow($row['id']);
            }
        }

        return $rows;
    }

    public function getGroup($module_group_id)
    {
        foreach (BlestaDb::$data['module_groups'] as $group) {
            if ((string) $group['id'] === (string) $module_group_id) {
                $g = (object) $group;
                $g->rows = array_map(fn ($id) => $this->getRow($id), $group['rows'] ?? []);
                return $g;
            }
        }

        return false;
    }
}

class Packages
{
    public function get($package_id)
    {
        foreach (BlestaDb::$data['packages'] as $package) {
            if ((string) $package['id'] === (string) $package_id) {
                return self::toObject($package);
            }
        }

        return false;
    }

    public function getByPricingId($pricing_id)
    {
        foreach (BlestaDb::$data['packages'] as $package) {
            foreach ($package['pricing'] as $pricing) {
                if ((string) $pricing['id'] === (string) $pricing_id) {
                    return self::toObject($package);
                }
            }
        }

        return false;
    }

    /** As Packages::get builds it: meta a stdClass (decrypted), pricing a list of objects. */
    private static function toObject(array $package): stdClass
    {
        $object = (object) $package;
        $object->meta = BlestaDb::meta($package['meta'] ?? []);
        $object->pricing = array_map(fn ($p) => (object) $p, $package['pricing'] ?? []);

        return $object;
    }
}

class Services
{
    public function get($service_id)
    {
        return BlestaCore::getService($service_id);
    }

    public function edit($service_id, array $vars, $bypass_module = false, $notify = false)
    {
        return BlestaCore::servicesEdit($service_id, $vars, $bypass_module, $notify);
    }

    public function errors()
    {
        return BlestaCore::$errors ?: false;
    }
}

// ------------------------------------------------------------------------------------------
// The Module base class
// ------------------------------------------------------------------------------------------

#[\AllowDynamicProperties]
abstract class Module
{
    protected $Http;
    protected $config;
    public $base_uri;
    private $module;
    private $module_row;
    private $messages = [];
    private $log_group;

    /** Who is acting (Blesta's container "requestor"). */
    public static $requestor_staff_id = null;

    protected function loadConfig($file)
    {
        if (is_file($file)) {
            $this->config = json_decode((string) file_get_contents($file));
        }
    }

    private function translate($value)
    {
        return Language::has((string) $value) ? Language::_($value, true) : $value;
    }

    public function getName()
    {
        return isset($this->config->name) ? $this->translate($this->config->name) : null;
    }

    public function getDescription()
    {
        return isset($this->config->description) ? $this->translate($this->config->description) : null;
    }

    public function getVersion()
    {
        return $this->config->version ?? null;
    }

    public function getType()
    {
        return $this->config->type ?? 'generic';
    }

    public function getAuthors()
    {
        return isset($this->config->authors) ? array_map(fn ($a) => (array) $a, $this->config->authors) : null;
    }

    public function getServiceName($service)
    {
        if (isset($this->config->service->name_key)) {
            foreach ($service->fields as $field) {
                if ($field->key == $this->config->service->name_key) {
                    return $field->value;
                }
            }
        }

        return null;
    }

    public function moduleRowName()
    {
        return isset($this->config->module->row) ? $this->translate($this->config->module->row) : null;
    }

    public function moduleRowNamePlural()
    {
        return isset($this->config->module->rows) ? $this->translate($this->config->module->rows) : null;
    }

    public function moduleGroupName()
    {
        return isset($this->config->module->group) ? $this->translate($this->config->module->group) : null;
    }

    public function moduleRowMetaKey()
    {
        return $this->config->module->row_key ?? null;
    }

    public function install()
    {
    }

    public function upgrade($current_version)
    {
    }

    public function uninstall($module_id, $last_instance)
    {
    }

    public function getLogo()
    {
        return $this->config->logo ?? 'views/default/images/logo.png';
    }

    public function cron($key)
    {
        return [];
    }

    final public function setModule($module)
    {
        $this->module = $module;
    }

    final public function setModuleRow($module_row)
    {
        $this->module_row = $module_row;
    }

    final public function getModule()
    {
        return $this->module;
    }

    final public function getModuleRow($module_row_id = null)
    {
        if ($module_row_id) {
            if (!isset($this->ModuleManager)) {
                Loader::loadModels($this, ['ModuleManager']);
            }
            $row = $this->ModuleManager->getRow($module_row_id);
            if ($row && $row->module_id == $this->module->id) {
                return $row;
            }

            return false;
        }

        return $this->module_row;
    }

    final public function getModuleRows($module_group_id = null)
    {
        if (!isset($this->module->id)) {
            return false;
        }
        if (!isset($this->ModuleManager)) {
            Loader::loadModels($this, ['ModuleManager']);
        }

        return $this->ModuleManager->getRows($this->module->id, $module_group_id);
    }

    public function getPackageServiceName($packages, ?array $vars = null)
    {
        if (isset($this->config->package->name_key) && isset($vars[$this->config->package->name_key])) {
            return $vars[$this->config->package->name_key];
        }

        return null;
    }

    public function validateService($package, ?array $vars = null)
    {
        return true;
    }

    public function validateServiceEdit($service, ?array $vars = null)
    {
        return true;
    }

    public function addService($package, ?array $vars = null, $parent_package = null, $parent_service = null, $status = 'pending')
    {
        return [];
    }

    public function editService($package, $service, ?array $vars = [], $parent_package = null, $parent_service = null)
    {
        return null;
    }

    public function cancelService($package, $service, $parent_package = null, $parent_service = null)
    {
        return null;
    }

    public function suspendService($package, $service, $parent_package = null, $parent_service = null)
    {
        return null;
    }

    public function unsuspendService($package, $service, $parent_package = null, $parent_service = null)
    {
        return null;
    }

    public function renewService($package, $service, $parent_package = null, $parent_service = null)
    {
        return null;
    }

    public function changeServicePackage($package_from, $package_to, $service, $parent_package = null, $parent_service = null)
    {
        return null;
    }

    public function addPackage(?array $vars = null)
    {
        $meta = [];
        foreach ((array) ($vars['meta'] ?? []) as $key => $value) {
            $meta[] = ['key' => $key, 'value' => $value, 'encrypted' => 0];
        }

        return $meta;
    }

    public function editPackage($package, ?array $vars = null)
    {
        return $this->addPackage($vars);
    }

    public function deletePackage($package)
    {
    }

    public function manageModule($module, array &$vars)
    {
        return '';
    }

    public function manageAddRow(array &$vars)
    {
        return '';
    }

    public function manageEditRow($module_row, array &$vars)
    {
        return '';
    }

    public function addModuleRow(array &$vars)
    {
        $meta = [];
        foreach ($vars as $key => $value) {
            $meta[] = ['key' => $key, 'value' => $value, 'encrypted' => 0];
        }

        return $meta;
    }

    public function editModuleRow($module_row, array &$vars)
    {
        return $this->addModuleRow($vars);
    }

    public function deleteModuleRow($module_row)
    {
    }

    public function getGroupOrderOptions()
    {
    }

    /** Blesta picks by the group's add_order; every row here is available, so the first one. */
    public function selectModuleRow($module_group_id)
    {
        if (!isset($this->ModuleManager)) {
            Loader::loadModels($this, ['ModuleManager']);
        }
        $group = $this->ModuleManager->getGroup($module_group_id);
        if (empty($group->rows)) {
            return 0;
        }

        return $group->rows[0]->id;
    }

    public function getPackageFields($vars = null)
    {
        return new ModuleFields();
    }

    public function getEmailTags()
    {
        return isset($this->config->email_tags) ? (array) $this->config->email_tags : [];
    }

    public function getAdminAddFields($package, $vars = null)
    {
        return new ModuleFields();
    }

    public function getClientAddFields($package, $vars = null)
    {
        return new ModuleFields();
    }

    public function getAdminEditFields($package, $vars = null)
    {
        return new ModuleFields();
    }

    public function getClientEditFields($package, $vars = null)
    {
        return new ModuleFields();
    }

    public function getAdminServiceInfo($service, $package)
    {
        return '';
    }

    public function getClientServiceInfo($service, $package)
    {
        return '';
    }

    public function getAdminServiceTabs($service)
    {
        Loader::loadModels($this, ['Packages']);
        $package = $this->Packages->get($service->package_id ?? $service->package->id);

        return $package ? $this->getAdminTabs($package) : [];
    }

    public function getClientServiceTabs($service)
    {
        Loader::loadModels($this, ['Packages']);
        $package = $this->Packages->get($service->package_id ?? $service->package->id);

        return $package ? $this->getClientTabs($package) : [];
    }

    public function getAdminTabs($package)
    {
        return [];
    }

    public function getClientTabs($package)
    {
        return [];
    }

    public function getClientManagementContent($package, $service)
    {
        return '';
    }

    public function errors()
    {
        if (isset($this->Input) && is_object($this->Input) && $this->Input instanceof Input) {
            return $this->Input->errors();
        }

        return null;
    }

    final protected function setMessage($type, $message)
    {
        if (!array_key_exists($type, $this->messages)) {
            $this->messages[$type] = ['message' => []];
        }
        $this->messages[$type]['message'][] = $message;
    }

    final public function getMessages()
    {
        return $this->messages;
    }

    protected function log($url, $data = null, $direction = 'input', $success = false)
    {
        if (!isset($this->Logs)) {
            Loader::loadModels($this, ['Logs']);
        }
        if ($this->log_group == null) {
            $this->log_group = substr(md5((string) mt_rand()), mt_rand(0, 23), 8);
        }
        $this->Logs->addModule([
            'staff_id' => self::$requestor_staff_id,
            'module_id' => $this->module->id ?? null,
            'direction' => $direction,
            'url' => $url,
            'data' => $data,
            'status' => ($success ? 'success' : 'error'),
            'group' => $this->log_group,
        ]);
        if (($error = $this->Logs->errors())) {
            throw new Exception(serialize($error));
        }

        return $this->log_group;
    }

    protected function serviceFieldsToObject(array $fields)
    {
        $data = new stdClass();
        foreach ($fields as $field) {
            if (is_array($field)) {
                $data->{$field['key']} = $field['value'];
            } else {
                $data->{$field->key} = $field->value;
            }
        }

        return $data;
    }

    protected function getCommonError($type)
    {
        return ['common' => [$type => $type]];
    }
}
