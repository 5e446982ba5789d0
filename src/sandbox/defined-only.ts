/** A patch without its undefined fields, so spreading it over settings keeps what it leaves out. */
export function definedOnly<T extends object>(patch: Partial<T> | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(patch ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}
