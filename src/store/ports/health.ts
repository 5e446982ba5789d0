export interface HealthOps {
  /** The database takes a write now (without waiting long for a lock); the reason when not. */
  writable(): Promise<string | undefined>;
}
