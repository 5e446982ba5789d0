<?php

/**
 * STAND-IN for the parts of Paymenter v1.5.8 (and of Laravel) that the LicenseBridge extension
 * touches. Test code only: never copied into a Paymenter install.
 *
 * Written from research notes on Paymenter v1.5.8 (commit e9ff5c5e480abdacee3ee156245b2a8945236fd1,
 * see integrations/paymenter/README.md, "Sources"); each class names the Paymenter file it stands
 * for. Only what the extension uses is here, with Paymenter's names, signatures and behaviour:
 * - the extension base class with its config() helper (app/Classes/Extension/Extension.php);
 * - ExtensionHelper's construction and calling of server extensions (app/Helpers/ExtensionHelper.php);
 * - Service / Product / Plan / User / Server / Setting / Property models over a JSON file that
 *   plays the database, with Eloquent's dirty tracking and the Service "updated" observer event;
 * - the facades Event, Route, Log, DB, Session, the Request, and the helpers report(), route(),
 *   redirect(), csrf_token(), abort(), class_basename(), event().
 */

namespace StandIn {
    /** The "database": one JSON file, read at start and written back by the driver. */
    final class Store
    {
        public static array $db = [];
        public static string $path = '';
        /** Everything Log::*, report() and the extension put out, in order. */
        public static array $log = [];
        /** Queued jobs: [class, serviceId]. */
        public static array $queue = [];
        /** Open DB::transaction() levels and their after-commit callbacks. */
        public static int $transactions = 0;
        public static array $afterCommit = [];

        public static function load(string $path): void
        {
            self::$path = $path;
            self::$db = json_decode((string) file_get_contents($path), true, 512, JSON_THROW_ON_ERROR);
        }

        public static function save(): void
        {
            file_put_contents(self::$path, json_encode(self::$db, JSON_PRETTY_PRINT | JSON_UNESCAPED_SLASHES));
        }

        public static function log(string $level, string $message, array $context = []): void
        {
            $line = ['level' => $level, 'message' => $message, 'context' => $context];
            self::$log[] = $line;
            $file = getenv('PM_LOG');
            if ($file) {
                file_put_contents($file, json_encode($line, JSON_UNESCAPED_SLASHES) . "\n", FILE_APPEND);
            }
        }
    }

    /** A route registered through the Route facade. */
    final class RouteDef
    {
        public array $middleware = [];
        public ?string $name = null;

        public function __construct(public string $method, public string $uri, public $action) {}

        public function middleware($m): self
        {
            $this->middleware = array_merge($this->middleware, (array) $m);
            return $this;
        }

        public function withoutMiddleware($m): self
        {
            return $this;
        }

        public function name(string $name): self
        {
            $this->name = $name;
            Routes::$named[$name] = $this;
            return $this;
        }
    }

    final class Routes
    {
        /** @var RouteDef[] */
        public static array $named = [];
        /** Paymenter's own named routes that the extension links to (routes/web.php). */
        public const CORE = ['services.show' => '/services/{service}'];

        public static function url(string $name, array $params): string
        {
            $uri = self::CORE[$name] ?? (isset(self::$named[$name]) ? self::$named[$name]->uri : null);
            if ($uri === null) {
                throw new \InvalidArgumentException("Route [{$name}] not defined.");
            }
            $uri = preg_replace_callback('/\{(\w+)\}/', function ($m) use (&$params) {
                $v = $params[$m[1]] ?? '';
                unset($params[$m[1]]);
                return rawurlencode((string) $v);
            }, $uri);
            return 'http://paymenter.test' . $uri . ($params ? '?' . http_build_query($params) : '');
        }
    }

    final class RedirectResponse
    {
        public function __construct(public string $targetUrl) {}
    }

    final class Redirector
    {
        public function route(string $name, $params = []): RedirectResponse
        {
            return new RedirectResponse(Routes::url($name, (array) $params));
        }

        public function to(string $url): RedirectResponse
        {
            return new RedirectResponse($url);
        }
    }
}

namespace Symfony\Component\HttpKernel\Exception {
    class HttpException extends \RuntimeException
    {
        public function __construct(public int $statusCode, string $message = '')
        {
            parent::__construct($message);
        }
    }

    class NotFoundHttpException extends HttpException
    {
        public function __construct(string $message = '')
        {
            parent::__construct(404, $message);
        }
    }
}

namespace Illuminate\Database\Eloquent {
    /** Eloquent's collection: what $model->settings / ->properties return. */
    class Collection implements \IteratorAggregate, \Countable
    {
        public function __construct(public array $items = []) {}

        public function getIterator(): \ArrayIterator
        {
            return new \ArrayIterator($this->items);
        }

        public function count(): int
        {
            return count($this->items);
        }

        public function where(string $key, $value): self
        {
            return new self(array_values(array_filter($this->items, fn ($m) => $m->$key == $value)));
        }

        public function first()
        {
            return $this->items[0] ?? null;
        }
    }
}

namespace Illuminate\Support\Facades {
    use StandIn\RouteDef;
    use StandIn\Store;

    class Event
    {
        public static array $listeners = [];

        public static function listen($events, $listener = null): void
        {
            foreach ((array) $events as $event) {
                self::$listeners[$event][] = $listener;
            }
        }

        public static function dispatch(object $event): void
        {
            foreach (self::$listeners[get_class($event)] ?? [] as $listener) {
                $listener($event);
            }
        }
    }

    class Route
    {
        public static function post(string $uri, $action): RouteDef
        {
            return new RouteDef('POST', $uri, $action);
        }

        public static function get(string $uri, $action): RouteDef
        {
            return new RouteDef('GET', $uri, $action);
        }
    }

    class Log
    {
        public static function __callStatic(string $level, array $args): void
        {
            Store::log($level, (string) ($args[0] ?? ''), (array) ($args[1] ?? []));
        }
    }

    /** Laravel's DB::afterCommit runs the callback at once outside a transaction, else after the outermost commit. */
    class DB
    {
        public static function afterCommit(callable $callback): void
        {
            if (Store::$transactions === 0) {
                $callback();
                return;
            }
            Store::$afterCommit[] = $callback;
        }

        public static function transaction(callable $callback)
        {
            Store::$transactions++;
            try {
                $result = $callback();
            } finally {
                Store::$transactions--;
            }
            if (Store::$transactions === 0) {
                $callbacks = Store::$afterCommit;
                Store::$afterCommit = [];
                foreach ($callbacks as $cb) {
                    $cb();
                }
            }
            return $result;
        }
    }

    class Session
    {
        public static function put(string $key, $value): void
        {
            Store::$db['session'][$key] = $value;
        }

        public static function get(string $key, $default = null)
        {
            return Store::$db['session'][$key] ?? $default;
        }

        public static function has(string $key): bool
        {
            return isset(Store::$db['session'][$key]);
        }

        public static function forget(string $key): void
        {
            unset(Store::$db['session'][$key]);
        }
    }
}

namespace Illuminate\Http {
    class Request
    {
        public function __construct(private array $input, private ?object $user) {}

        public function input(string $key, $default = null)
        {
            return $this->input[$key] ?? $default;
        }

        public function user()
        {
            return $this->user;
        }
    }
}

namespace App\Attributes {
    #[\Attribute(\Attribute::TARGET_CLASS)]
    class ExtensionMeta
    {
        public function __construct(
            public string $name,
            public string $description,
            public string $version,
            public string $author,
            public string $url = '',
            public string $icon = '',
        ) {}
    }
}

namespace App\Exceptions {
    /** app/Exceptions/DisplayException.php; Livewire components show its message (App\Livewire\Component::exception). */
    class DisplayException extends \Exception {}
}

namespace App\Events\Service {
    /** app/Events/Service/Updated.php, fired by App\Observers\ServiceObserver::updated. */
    class Updated
    {
        public function __construct(public \App\Models\Service $service) {}
    }
}

namespace App\Models {
    use Illuminate\Database\Eloquent\Collection;
    use StandIn\Store;

    /** The few Eloquent behaviours the extension relies on: attributes, relations as properties, dirty tracking. */
    abstract class Model
    {
        protected const TABLE = '';
        protected array $attributes = [];
        protected array $original = [];

        public function __construct(array $attributes = [])
        {
            $this->attributes = $attributes;
            $this->original = $attributes;
        }

        public static function find($id): ?static
        {
            $row = Store::$db[static::TABLE][(string) $id] ?? null;
            return $row === null ? null : new static($row);
        }

        public function __get(string $name)
        {
            $getter = 'get' . str_replace('_', '', ucwords($name, '_')) . 'Attribute';
            if (method_exists($this, $getter)) {
                return $this->$getter();
            }
            if (array_key_exists($name, $this->attributes)) {
                return $this->attributes[$name];
            }
            if (method_exists($this, $name)) {
                return $this->$name();
            }
            return null;
        }

        public function __set(string $name, $value): void
        {
            $this->attributes[$name] = $value;
        }

        public function __isset(string $name): bool
        {
            return $this->__get($name) !== null;
        }

        public function isDirty(?string $key = null): bool
        {
            $keys = $key === null ? array_keys($this->attributes) : [$key];
            foreach ($keys as $k) {
                if (($this->attributes[$k] ?? null) !== ($this->original[$k] ?? null)) {
                    return true;
                }
            }
            return false;
        }

        /** Eloquent save(): write, fire "updated" (dirty state still visible), then sync the original. */
        public function save(): bool
        {
            if (!$this->isDirty()) {
                return true;
            }
            Store::$db[static::TABLE][(string) $this->attributes['id']] = $this->attributes;
            $this->updated();
            $this->original = $this->attributes;
            return true;
        }

        public function update(array $attributes): bool
        {
            foreach ($attributes as $k => $v) {
                $this->$k = $v;
            }
            return $this->save();
        }

        protected function updated(): void {}
    }

    class User extends Model
    {
        protected const TABLE = 'users';

        /** App\Models\User::name(): first and last name, else the e-mail. */
        public function getNameAttribute(): string
        {
            $name = trim(($this->attributes['first_name'] ?? '') . ' ' . ($this->attributes['last_name'] ?? ''));
            return $name !== '' ? $name : (string) ($this->attributes['email'] ?? '');
        }
    }

    class Plan extends Model
    {
        protected const TABLE = 'plans';
    }

    /** A row of `settings` (key, value); values are already decrypted (App\Events\Setting\Retrieved). */
    class Setting extends Model {}

    /** extensions table, type = server. */
    class Server extends Model
    {
        protected const TABLE = 'servers';

        // The JSON row keeps the values under "setting_values": "settings" is the relation.

        public function settings(): Collection
        {
            $out = [];
            foreach ($this->attributes['setting_values'] ?? [] as $k => $v) {
                $out[] = new Setting(['key' => $k, 'value' => $v]);
            }
            return new Collection($out);
        }

        public function getTypeAttribute(): string
        {
            return 'server';
        }
    }

    class Product extends Model
    {
        protected const TABLE = 'products';

        public function server(): ?Server
        {
            return Server::find($this->attributes['server_id'] ?? 0);
        }

        public function settings(): Collection
        {
            $out = [];
            foreach ($this->attributes['setting_values'] ?? [] as $k => $v) {
                $out[] = new Setting(['key' => $k, 'value' => $v]);
            }
            return new Collection($out);
        }
    }

    class Property extends Model {}

    /** $model->properties() (a morphMany); the extension uses updateOrCreate only. */
    class PropertyRelation
    {
        public function __construct(private string $serviceId) {}

        public function updateOrCreate(array $match, array $values): Property
        {
            $key = (string) $match['key'];
            $row = Store::$db['properties'][$this->serviceId][$key] ?? ['key' => $key, 'name' => null, 'value' => null];
            $row = array_merge($row, $values, ['key' => $key]);
            Store::$db['properties'][$this->serviceId][$key] = $row;
            return new Property($row);
        }
    }

    class Service extends Model
    {
        protected const TABLE = 'services';

        public const STATUS_PENDING = 'pending';
        public const STATUS_ACTIVE = 'active';
        public const STATUS_CANCELLED = 'cancelled';
        public const STATUS_SUSPENDED = 'suspended';

        /** The `date` cast: a date at midnight (UTC here); stored as Y-m-d. */
        public function getExpiresAtAttribute(): ?\DateTimeImmutable
        {
            $v = $this->attributes['expires_at'] ?? null;
            return $v ? new \DateTimeImmutable($v . ' 00:00:00', new \DateTimeZone('UTC')) : null;
        }

        public function __set(string $name, $value): void
        {
            if ($name === 'expires_at' && $value instanceof \DateTimeInterface) {
                $value = $value->format('Y-m-d');
            }
            parent::__set($name, $value);
        }

        public function user(): ?User
        {
            return User::find($this->attributes['user_id'] ?? 0);
        }

        public function product(): ?Product
        {
            return Product::find($this->attributes['product_id'] ?? 0);
        }

        public function plan(): ?Plan
        {
            return Plan::find($this->attributes['plan_id'] ?? 0);
        }

        public function properties()
        {
            return new PropertyRelation((string) $this->attributes['id']);
        }

        public function getPropertiesAttribute(): Collection
        {
            $out = [];
            foreach (Store::$db['properties'][(string) $this->attributes['id']] ?? [] as $row) {
                $out[] = new Property($row);
            }
            return new Collection($out);
        }

        /** Select-type config options; the licence products here have none. */
        public function getConfigsAttribute(): Collection
        {
            return new Collection([]);
        }

        /** App\Models\Service::calculateNextDueDate(). */
        public function calculateNextDueDate(): ?\DateTimeImmutable
        {
            $plan = $this->plan;
            if ($plan->type === 'one-time' || $plan->type === 'free') {
                return null;
            }
            $base = (!$this->expires_at || $this->attributes['status'] !== self::STATUS_ACTIVE)
                ? new \DateTimeImmutable('today', new \DateTimeZone('UTC'))
                : $this->expires_at;
            return $base->modify('+' . (int) $plan->billing_period . ' ' . $plan->billing_unit);
        }

        /** App\Observers\ServiceObserver::updated. */
        protected function updated(): void
        {
            event(new \App\Events\Service\Updated($this));
        }
    }
}

namespace App\Classes\Extension {
    /** app/Classes/Extension/Extension.php */
    class Extension
    {
        public function __construct(public $config = []) {}

        public function config($key)
        {
            if (empty($this->config)) {
                // Paymenter then loads the first server's settings from the database; the
                // stand-in always passes them, as ExtensionHelper does.
                throw new \LogicException('stand-in: config() called with an empty $config (Paymenter would query the database here)');
            }
            return $this->config[$key] ?? null;
        }

        public function getConfig($values = [])
        {
            return [];
        }

        public function installed() {}

        public function uninstalled() {}

        public function upgraded($oldVersion = null) {}

        public function boot() {}
    }

    /** app/Classes/Extension/Server.php */
    class Server extends Extension {}
}

namespace App\Helpers {
    use App\Models\Product;
    use App\Models\Service;
    use Exception;
    use Illuminate\Database\Eloquent\Collection;

    /** The server-extension half of app/Helpers/ExtensionHelper.php. */
    class ExtensionHelper
    {
        public static function getExtension($type, $extension, $config = [])
        {
            $class = '\\Paymenter\\Extensions\\' . ucfirst($type) . 's\\' . $extension . '\\' . $extension;
            if (!class_exists($class)) {
                throw new Exception('Extension "' . $class . '" not found');
            }
            if (!is_array($config)) {
                $config = self::settingsToArray($config);
            }
            return new $class($config);
        }

        public static function hasFunction($extension, $function)
        {
            return method_exists(self::getExtension($extension->type, $extension->extension, $extension->settings), $function);
        }

        public static function testConfig($extension, $values)
        {
            return self::getExtension($extension->type, $extension->extension, $values)->testConfig();
        }

        public static function getCheckoutConfig(Product $product, $values = [])
        {
            $server = $product->server;
            if (!$server) {
                return [];
            }
            return self::call($server, 'getCheckoutConfig', [$product, $values, self::settingsToArray($product->settings)], mayFail: true) ?? [];
        }

        public static function call($extension, $function, $args = [], $mayFail = false)
        {
            try {
                if (!self::hasFunction($extension, $function)) {
                    throw new Exception('Function not found');
                }
                return self::getExtension($extension->type, $extension->extension, $extension->settings)->$function(...$args);
            } catch (Exception $e) {
                if (!$mayFail) {
                    throw $e;
                }
                if (!str_ends_with($e->getMessage(), 'not found')) {
                    report($e);
                }
            }
            return null;
        }

        public static function callService(Service $service, $function, $args = [], $mayFail = false)
        {
            $server = $service->product->server;
            if (!$server) {
                if ($mayFail) {
                    throw new Exception('No server assigned to this product');
                }
                return null;
            }
            return self::call($server, $function, [$service, self::settingsToArray($service->product->settings), self::getServiceProperties($service), ...$args], $mayFail);
        }

        public static function getProductConfig($server, $values = [])
        {
            return self::call($server, 'getProductConfig', [$values]);
        }

        public static function settingsToArray($settings)
        {
            $out = [];
            if ($settings instanceof Collection) {
                foreach ($settings as $setting) {
                    $out[$setting->key] = $setting->value;
                }
            }
            return $out;
        }

        public static function getServiceProperties(Service $service)
        {
            $properties = [];
            foreach ($service->properties as $property) {
                $properties[$property->key] = $property->value;
            }
            foreach ($service->configs as $config) {
                $properties[$config->configOption->env_variable] = $config->configValue->env_variable ?? $config->configValue->name;
            }
            return $properties;
        }

        protected static function checkServer(Service $service, $action)
        {
            $server = $service->product->server;
            if (!$server) {
                throw new Exception('No server assigned to this product');
            }
            if (!self::hasFunction($server, $action)) {
                throw new Exception('Server does not support the action: ' . $action);
            }
            return $server;
        }

        private static function serverCall(Service $service, string $method)
        {
            $server = self::checkServer($service, $method);
            return self::getExtension('server', $server->extension, $server->settings)
                ->$method($service, self::settingsToArray($service->product->settings), self::getServiceProperties($service));
        }

        public static function createServer(Service $service)
        {
            return self::serverCall($service, 'createServer');
        }

        public static function suspendServer(Service $service)
        {
            return self::serverCall($service, 'suspendServer');
        }

        public static function unsuspendServer(Service $service)
        {
            return self::serverCall($service, 'unsuspendServer');
        }

        public static function terminateServer(Service $service)
        {
            return self::serverCall($service, 'terminateServer');
        }

        public static function upgradeServer(Service $service)
        {
            return self::serverCall($service, 'upgradeServer');
        }

        public static function getActions(Service $service)
        {
            return self::serverCall($service, 'getActions');
        }

        public static function getView(Service $service, $view)
        {
            $function = isset($view['function']) ? $view['function'] : 'getView';
            $server = self::checkServer($service, $function);
            return self::getExtension('server', $server->extension, $server->settings)
                ->$function($service, self::settingsToArray($service->product->settings), self::getServiceProperties($service), $view['name']);
        }
    }
}

namespace {
    use StandIn\Redirector;
    use StandIn\Routes;
    use StandIn\Store;

    function event(object $event): void
    {
        \Illuminate\Support\Facades\Event::dispatch($event);
    }

    /** Laravel's report(): the exception goes to the log (Paymenter: Debug Logs → exception). */
    function report(\Throwable $e): void
    {
        Store::log('error', 'report: ' . get_class($e) . ': ' . $e->getMessage());
    }

    function route(string $name, $parameters = []): string
    {
        return Routes::url($name, (array) $parameters);
    }

    function redirect(): Redirector
    {
        return new Redirector();
    }

    function csrf_token(): string
    {
        return (string) (Store::$db['session']['_token'] ?? '');
    }

    function abort(int $code, string $message = ''): never
    {
        if ($code === 404) {
            throw new \Symfony\Component\HttpKernel\Exception\NotFoundHttpException($message);
        }
        throw new \Symfony\Component\HttpKernel\Exception\HttpException($code, $message);
    }

    function class_basename($class): string
    {
        $class = is_object($class) ? get_class($class) : $class;
        return basename(str_replace('\\', '/', $class));
    }
}
