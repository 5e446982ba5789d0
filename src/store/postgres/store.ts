import type { Clock } from "../../clock.js";
import type { Logger } from "../../log/logger.js";
import type { Store } from "../store.js";

export interface PostgresStoreOptions {
  clock: Clock;
  maxAttempts?: number;
  logger: Logger;
}

/** The PostgreSQL store (DATABASE_URL). */
export async function openPostgresStore(_url: string, _options: PostgresStoreOptions): Promise<Store> {
  throw new Error("DATABASE_URL: the PostgreSQL store is not built yet");
}
