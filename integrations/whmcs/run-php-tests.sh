#!/usr/bin/env bash
# The WHMCS module's PHP checks: `php -l` on every PHP file, then the plain-PHP unit checks.
# (The end-to-end tests against a real bridge run under vitest: test/integrations/whmcs.test.ts.)
set -Eeuo pipefail
cd "$(dirname "$0")"

if ! command -v php >/dev/null 2>&1; then
  echo "run-php-tests: php is not on PATH (apt-get install php-cli php-curl php-sqlite3)" >&2
  exit 1
fi
echo "php $(php -r 'echo PHP_VERSION;')"
for ext in curl pdo_sqlite; do
  php -r "exit(extension_loaded('$ext') ? 0 : 1);" || { echo "run-php-tests: the PHP extension $ext is missing" >&2; exit 1; }
done

status=0
count=0
while IFS= read -r -d '' file; do
  count=$((count + 1))
  if ! out=$(php -l "$file" 2>&1); then
    echo "$out" >&2
    status=1
  fi
done < <(find . -name '*.php' -print0 | sort -z)
[ "$status" -eq 0 ] || { echo "run-php-tests: syntax errors" >&2; exit 1; }
echo "php -l: $count files OK"

php -d error_reporting=E_ALL -d display_errors=stderr tests/unit.php
