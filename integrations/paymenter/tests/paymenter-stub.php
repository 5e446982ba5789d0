<?php

/**
 * STAND-IN for the parts of Paymenter v1.5.8 (and of Laravel) that the LicenseBridge extension
 * touches. Test code only: never copied into a Paymenter install.
 *
 * Written from Paymenter's source, v1.5.8 (commit e9ff5c5e480abdacee3ee156245b2a8945236fd1; the
 * files used are unchanged on master ce12be75, see integrations/paymenter/README.md, "Sources"),
 * and from Laravel's, v12.65.0 (Paymenter's composer.lock); each class names the file it stands
 * for. Only what the extension uses is here, with their names, signatures and behaviour:
 * - the extension base class with its config() helper (app/Classes/Extension/Extension.php);
 * - ExtensionHelper's construction and calling of server extensions (app/Helpers/ExtensionHelper.php);
 * - Service / Product / Plan / User / Server / Setting / Property models over a JSON file that
 *   plays the database, with Eloquent's dirty tracking and the Service "updated" observer event;
 * - the settings table (database/migrations/2024_02_15_122225_create_settings_table.php: type
 *   defaults to 'string', encrypted to false) and its model's events: App\Events\Setting\Saving
 *   encrypts the value of a setting flagged encrypted, App\Events\Setting\Retrieved decrypts it;
 * - Laravel's router as far as routes go: a RouteCollection whose name look-ups are taken when a
 *   route is added and refreshed once the application has booted; `php artisan route:cache` (a
 *   snapshot of the routes a freshly booted application registers); a cached application that
 *   replaces its routes with the snapshot once booted (Router::setCompiledRoutes), keeps routes
 *   added after that (CompiledRouteCollection::add) and matches them when the snapshot does not;
 *   and the Routing event fired before every match (Router::findRoute);
 * - the facades Event, Route, Log, DB, Session, Crypt, the Request, and the helpers report(),
 *   route(), redirect(), csrf_token(), abort(), class_basename(), event().
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

    /**
     * A route (Illuminate\Routing\Route): method, URI, action. An array action may carry its
     * name ('as') and middleware; a name set fluently with ->name() changes the route but not the
     * collection's name look-up until that is refreshed (RouteCollection::refreshNameLookups).
     */
    final class RouteDef
    {
        public array $middleware = [];
        public ?string $name = null;
        public $action;

        public function __construct(public string $method, public string $uri, $action)
        {
            if (is_array($action) && isset($action['uses'])) {
                $this->name = isset($action['as']) ? (string) $action['as'] : null;
                $this->middleware = (array) ($action['middleware'] ?? []);
                $action = is_string($action['uses']) && str_contains($action['uses'], '@') ? explode('@', $action['uses'], 2) : $action['uses'];
            }
            $this->action = $action;
        }

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
            return $this;
        }

        /** What the route cache keeps of a route (Route::prepareForSerialization + compile). */
        public function toArray(): array
        {
            return ['method' => $this->method, 'uri' => $this->uri, 'action' => $this->action, 'name' => $this->name, 'middleware' => $this->middleware];
        }

        public static function fromArray(array $a): self
        {
            $route = new self($a['method'], $a['uri'], $a['action']);
            $route->name = $a['name'];
            $route->middleware = $a['middleware'];
            return $route;
        }

        /** The URI's parameters when it matches $path, else null. */
        public function matches(string $method, string $path): ?array
        {
            if ($method !== $this->method) {
                return null;
            }
            $pattern = '#^' . preg_replace('/\\\{(\w+)\\\}/', '(?P<$1>[^/]+)', preg_quote($this->uri, '#')) . '$#';
            return preg_match($pattern, $path, $m) === 1 ? array_filter($m, 'is_string', ARRAY_FILTER_USE_KEY) : null;
        }
    }

    /** Illuminate\Routing\RouteCollection: routes, and name look-ups taken at add() (addLookups). */
    class RouteCollection
    {
        /** @var RouteDef[] */
        public array $routes = [];
        /** @var array<string, RouteDef> */
        protected array $nameList = [];

        public function add(RouteDef $route): RouteDef
        {
            $this->routes[] = $route;
            if ($route->name !== null && !isset($this->nameList[$route->name])) {
                $this->nameList[$route->name] = $route;
            }
            return $route;
        }

        public function refreshNameLookups(): void
        {
            $this->nameList = [];
            foreach ($this->routes as $route) {
                if ($route->name !== null && !isset($this->nameList[$route->name])) {
                    $this->nameList[$route->name] = $route;
                }
            }
        }

        public function getByName(string $name): ?RouteDef
        {
            return $this->nameList[$name] ?? null;
        }

        public function hasNamedRoute(string $name): bool
        {
            return $this->getByName($name) !== null;
        }

        /** @return array{0: RouteDef, 1: array}|null */
        public function match(string $method, string $path): ?array
        {
            foreach ($this->routes as $route) {
                if (($params = $route->matches($method, $path)) !== null) {
                    return [$route, $params];
                }
            }
            return null;
        }
    }

    /**
     * Illuminate\Routing\CompiledRouteCollection (Laravel 12.65, src/Illuminate/Routing/
     * CompiledRouteCollection.php): the cached routes, plus "the dynamically added routes that were
     * added after loading the cached, compiled routes" (add(), 78-81), matched when the cached
     * ones do not match (match(), 126-136) and found by name (getByName, hasNamedRoute). Its
     * refreshNameLookups() does nothing (90-93).
     */
    final class CompiledRouteCollection extends RouteCollection
    {
        /** @var RouteDef[] */
        private array $compiled;
        private RouteCollection $dynamic;

        public function __construct(array $snapshot)
        {
            $this->compiled = array_map([RouteDef::class, 'fromArray'], $snapshot);
            $this->dynamic = new RouteCollection();
        }

        public function add(RouteDef $route): RouteDef
        {
            return $this->dynamic->add($route);
        }

        public function refreshNameLookups(): void {}

        public function getByName(string $name): ?RouteDef
        {
            foreach ($this->compiled as $route) {
                if ($route->name === $name) {
                    return $route;
                }
            }
            return $this->dynamic->getByName($name);
        }

        public function match(string $method, string $path): ?array
        {
            foreach ($this->compiled as $route) {
                if (($params = $route->matches($method, $path)) !== null) {
                    return [$route, $params];
                }
            }
            return $this->dynamic->match($method, $path);
        }
    }

    /**
     * Illuminate\Routing\Router and the application's route loading (Laravel 12.65):
     * - not cached: AppRouteServiceProvider loads routes/web.php after the providers booted, and
     *   refreshes the name look-ups in an app->booted callback (RouteServiceProvider::register,
     *   53-66);
     * - cached (bootstrap/cache/routes-v7.php exists): in an app->booted callback, so after every
     *   provider's boot() (AppServiceProvider::boot boots the extensions), the cache file calls
     *   Router::setCompiledRoutes(), which puts a new CompiledRouteCollection in place of the one
     *   the boot added to (RouteServiceProvider::loadCachedRoutes 141-152; Router.php 1457-1464);
     * - `php artisan route:cache` boots a fresh application and writes what its router then holds
     *   (RouteCacheCommand::getFreshApplicationRoutes, 78-96);
     * - every request: findRoute() fires Illuminate\Routing\Events\Routing, then matches
     *   (Router.php 773-784).
     */
    final class Router
    {
        public static RouteCollection $routes;

        /** Paymenter's own routes that matter here (routes/web.php 46; Livewire's update route, AppServiceProvider 139-141). */
        public const CORE = [
            ['GET', '/services/{service}', 'services.show'],
            ['POST', '/paymenter/update', 'paymenter.update'],
        ];

        public static function reset(): void
        {
            self::$routes = new RouteCollection();
        }

        public static function add(RouteDef $route): RouteDef
        {
            return self::$routes->add($route);
        }

        /** The providers have booted: load the application's routes, cached or not. */
        public static function booted(?array $cache): void
        {
            if ($cache !== null) {
                self::$routes = new CompiledRouteCollection($cache);
                return;
            }
            foreach (self::CORE as [$method, $uri, $name]) {
                self::add((new RouteDef($method, $uri, 'core'))->name($name));
            }
            self::$routes->refreshNameLookups();
        }

        /** What `php artisan route:cache` writes. */
        public static function snapshot(): array
        {
            return array_map(static fn (RouteDef $r) => $r->toArray(), self::$routes->routes);
        }

        /** Router::findRoute(): the Routing event, then the match (null: 404). */
        public static function findRoute(string $method, string $path, object $request): ?array
        {
            \event(new \Illuminate\Routing\Events\Routing($request));
            return self::$routes->match($method, $path);
        }
    }

    final class Routes
    {
        /** UrlGenerator::route(): a named route's URL, or RouteNotFoundException. */
        public static function url(string $name, array $params): string
        {
            $route = Router::$routes->getByName($name);
            if ($route === null) {
                throw new \Symfony\Component\Routing\Exception\RouteNotFoundException("Route [{$name}] not defined.");
            }
            $uri = preg_replace_callback('/\{(\w+)\}/', function ($m) use (&$params) {
                $v = $params[$m[1]] ?? '';
                unset($params[$m[1]]);
                return rawurlencode((string) $v);
            }, $route->uri);
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

namespace Symfony\Component\Routing\Exception {
    class RouteNotFoundException extends \InvalidArgumentException {}
}

namespace Illuminate\Routing\Events {
    /** Illuminate\Routing\Events\Routing: fired by Router::findRoute() before it matches a request. */
    class Routing
    {
        public function __construct(public $request) {}
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
    use StandIn\Router;
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
            return Router::add(new RouteDef('POST', $uri, $action));
        }

        public static function get(string $uri, $action): RouteDef
        {
            return Router::add(new RouteDef('GET', $uri, $action));
        }

        /** Router::has(): the collection's name look-up. */
        public static function has(string $name): bool
        {
            return Router::$routes->hasNamedRoute($name);
        }
    }

    /**
     * Laravel's Crypt (AES-256-CBC with APP_KEY). The stand-in only needs a stored form that is not
     * the value and that only decryptString() turns back (PHP without openssl here).
     */
    class Crypt
    {
        private const PREFIX = 'stand-in-crypt:';

        public static function encryptString($value): string
        {
            $value = (string) $value;
            return self::PREFIX . base64_encode($value ^ self::pad(strlen($value)));
        }

        public static function decryptString($payload): string
        {
            $payload = (string) $payload;
            if (!str_starts_with($payload, self::PREFIX)) {
                throw new \RuntimeException('The payload is invalid.');
            }
            $raw = (string) base64_decode(substr($payload, strlen(self::PREFIX)), true);
            return $raw ^ self::pad(strlen($raw));
        }

        private static function pad(int $length): string
        {
            $pad = '';
            for ($i = 0; strlen($pad) < $length; $i++) {
                $pad .= hash('sha256', 'APP_KEY' . $i, true);
            }
            return substr($pad, 0, $length);
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

namespace App\Events\Setting {
    use App\Models\Setting;
    use Illuminate\Support\Facades\Crypt;
    use Throwable;

    /** app/Events/Setting/Saving.php (v1.5.8, 19-51): an encrypted setting's value is encrypted, else cast to its type. */
    class Saving
    {
        public function __construct(Setting $setting)
        {
            if ($setting->encrypted) {
                $setting->value = Crypt::encryptString($setting->value);
                return;
            }
            switch ($setting->type) {
                case 'boolean':
                    $setting->value = (bool) $setting->value;
                    break;
                case 'integer':
                    $setting->value = (int) $setting->value;
                    break;
            }
        }
    }

    /** app/Events/Setting/Retrieved.php (v1.5.8, 19-46): decrypted (null when it cannot be), then cast to its type. */
    class Retrieved
    {
        public function __construct(Setting $setting)
        {
            if ($setting->encrypted && $setting->value) {
                try {
                    $setting->value = Crypt::decryptString($setting->value);
                } catch (Throwable $th) {
                    report($th);
                    $setting->value = null;
                }
            }
            switch ($setting->type) {
                case 'boolean':
                    $setting->value = (bool) $setting->value;
                    break;
                case 'integer':
                    $setting->value = (int) $setting->value;
                    break;
            }
        }
    }
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

    /**
     * app/Models/Setting.php: a row of `settings` (key, value, type, encrypted, settingable_*), with
     * 'retrieved' => Retrieved and 'saving' => Saving ($dispatchesEvents), and the table's defaults
     * (type 'string', encrypted false). Products keep plain values here ("setting_values").
     */
    class Setting extends Model
    {
        protected const TABLE = 'settings';

        /** A row read from the table: the Retrieved event decrypts and casts it. */
        public static function retrieve(array $row): self
        {
            $setting = new self($row);
            new \App\Events\Setting\Retrieved($setting);
            $setting->original = $setting->attributes;
            return $setting;
        }

        public function save(): bool
        {
            $this->attributes += ['type' => 'string', 'encrypted' => false];
            new \App\Events\Setting\Saving($this);
            if (!isset($this->attributes['id'])) {
                $ids = array_map('intval', array_keys(Store::$db['settings'] ?? []));
                $this->attributes['id'] = (string) (($ids ? max($ids) : 0) + 1);
            }
            $this->attributes['encrypted'] = (bool) $this->attributes['encrypted'];
            Store::$db['settings'][(string) $this->attributes['id']] = $this->attributes;
            $this->original = $this->attributes;
            return true;
        }
    }

    /** $model->settings(): a morphMany of Setting (App\Models\Extension::settings). */
    class SettingRelation
    {
        public function __construct(private string $type, private string $id, private array $where = []) {}

        public function where(string $key, $value): self
        {
            return new self($this->type, $this->id, $this->where + [$key => $value]);
        }

        /** The rows, retrieved (decrypted). */
        public function get(): Collection
        {
            $out = [];
            foreach (Store::$db['settings'] ?? [] as $row) {
                if ($row['settingable_type'] !== $this->type || (string) $row['settingable_id'] !== $this->id) {
                    continue;
                }
                foreach ($this->where as $k => $v) {
                    if ((string) ($row[$k] ?? '') !== (string) $v) {
                        continue 2;
                    }
                }
                $out[] = Setting::retrieve($row);
            }
            return new Collection($out);
        }

        public function first(): ?Setting
        {
            return $this->get()->first();
        }

        /** Eloquent updateOrCreate: firstOrNew($attributes) (retrieved, so decrypted), fill($values), save(). */
        public function updateOrCreate(array $attributes, array $values = []): Setting
        {
            $attributes += ['settingable_type' => $this->type, 'settingable_id' => $this->id];
            $setting = (new self($this->type, $this->id, $attributes))->first() ?? new Setting($attributes);
            foreach ($values as $k => $v) {
                $setting->$k = $v;
            }
            $setting->save();
            return $setting;
        }
    }

    /** app/Models/Server.php: the extensions table, type = server. */
    class Server extends Model
    {
        protected const TABLE = 'servers';

        public static function create(array $attributes): self
        {
            $ids = array_map('intval', array_keys(Store::$db[static::TABLE] ?? []));
            $attributes['id'] = (string) (($ids ? max($ids) : 0) + 1);
            Store::$db[static::TABLE][$attributes['id']] = $attributes;
            return new self($attributes);
        }

        public function settings(): SettingRelation
        {
            return new SettingRelation('App\\Models\\Server', (string) $this->attributes['id']);
        }

        /** $server->settings: the relation's rows, each retrieved (decrypted). */
        public function getSettingsAttribute(): Collection
        {
            return $this->settings()->get();
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

        /** getConfig($type, $extension, $config = []): the extension's config fields. */
        public static function getConfig($type, $extension, $config = [])
        {
            return self::getExtension($type, $extension)->getConfig($config);
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
