#!/usr/bin/env bash
# `php -l` on every PHP file (and Blesta .pdt view) of every panel module under integrations/ (the modules, their copies
# of the shared client, and the test stand-ins). .ci/run calls this after the vitest suite, which
# runs the modules for real against a bridge (test/integrations/*.test.ts).
set -Eeuo pipefail
cd "$(dirname "$0")"

if ! command -v php >/dev/null 2>&1; then
  echo "lint-php: php is not on PATH (apt-get install php-cli php-curl)" >&2
  exit 1
fi
echo "php $(php -r 'echo PHP_VERSION;')"

status=0
count=0
while IFS= read -r -d '' file; do
  count=$((count + 1))
  if ! out=$(php -l "$file" 2>&1); then
    echo "$out" >&2
    status=1
  fi
done < <(find . -name node_modules -prune -o \( -name '*.php' -o -name '*.pdt' \) -type f -print0 | sort -z)
[ "$count" -gt 0 ] || { echo "lint-php: no PHP files found under integrations/" >&2; exit 1; }
[ "$status" -eq 0 ] || { echo "lint-php: syntax errors" >&2; exit 1; }
echo "php -l: $count files OK"
