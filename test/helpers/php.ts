import { execFile, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * Running the panel modules (PHP) for real with php-cli, from vitest. CI installs php-cli and
 * sets LB_REQUIRE_PHP=1, so there a missing php fails the run instead of skipping; on a
 * developer's machine without php the module tests are skipped, saying why.
 */

export const INTEGRATIONS = fileURLToPath(new URL("../../integrations", import.meta.url));

/**
 * A PHP with no php.ini and only the curl extension loaded (json is part of PHP 8): the least a
 * stock panel host has, so a module that needs mbstring, intl or anything else fails here.
 */
export const BARE_PHP = ["-n", "-d", "extension=curl"] as const;

/** Why the PHP tests cannot run here, or null when they can. */
export function phpUnavailable(extensions: readonly string[] = ["curl"]): string | null {
  const why = (() => {
    if (process.env.LB_SKIP_PHP) return "LB_SKIP_PHP is set";
    const probe = spawnSync("php", [...BARE_PHP, "-r", `foreach (${JSON.stringify(extensions)} as $e) { if (!extension_loaded($e)) { echo $e; exit(3); } }`], {
      encoding: "utf8",
      timeout: 10_000,
    });
    if (probe.error) return "php is not on PATH (apt-get install php-cli php-curl php-sqlite3)";
    if (probe.status !== 0) return `the PHP extension ${probe.stdout.trim()} is missing (apt-get install php-curl php-sqlite3)`;
    return null;
  })();
  if (why && process.env.LB_REQUIRE_PHP) throw new Error(`LB_REQUIRE_PHP is set but the PHP tests cannot run: ${why}`);
  return why;
}

export interface PhpRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (throws with the output when it is not). */
  json<T = Record<string, unknown>>(): T;
}

/**
 * Runs `php <script> [args]` with `env` added to this process's environment; never rejects on a
 * non-zero exit (the test asserts the code).
 */
export function runPhp(script: string, args: string[] = [], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<PhpRun> {
  return new Promise((resolve, reject) => {
    execFile(
      "php",
      [...BARE_PHP, "-d", "error_reporting=E_ALL", "-d", "display_errors=stderr", script, ...args],
      { env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error && typeof (error as { code?: unknown }).code !== "number") return reject(error);
        const code = error ? Number((error as { code: number }).code) : 0;
        resolve({
          code,
          stdout,
          stderr,
          json<T>() {
            try {
              return JSON.parse(stdout) as T;
            } catch {
              throw new Error(`php ${script} did not print JSON (exit ${code}):\n${stdout}\n--- stderr ---\n${stderr}`);
            }
          },
        });
      },
    );
  });
}
