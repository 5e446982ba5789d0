import pino, { type Logger, type LoggerOptions } from "pino";

export type { Logger };

/**
 * Paths pino censors in every log line. Secrets are also kept out of messages at the
 * source (the reseller client scrubs tokens from URLs and bodies); this is the second net.
 */
export const REDACT_PATHS = [
  "token",
  "*.token",
  "password",
  "*.password",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "req.headers.authorization",
  'req.headers["webhook-signature"]',
  "secret",
  "*.secret",
  "secrets",
  "*.secrets",
];

export interface CreateLoggerOptions {
  level?: string;
  /** Pretty, human output; default: when stdout is a terminal. */
  pretty?: boolean;
  /** Where lines go (tests capture them); default stdout. */
  destination?: NodeJS.WritableStream;
}

export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const base: LoggerOptions = {
    level: options.level ?? "info",
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    base: { service: "license-bridge" },
  };
  const pretty = options.pretty ?? (process.stdout.isTTY === true && !options.destination);
  if (pretty) {
    return pino({ ...base, transport: { target: "pino-pretty", options: { colorize: true } } });
  }
  return options.destination ? pino(base, options.destination as pino.DestinationStream) : pino(base);
}

/** A logger that writes nothing, for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
