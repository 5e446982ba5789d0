import { ServiceUnavailableError } from "../../http/errors.js";

/**
 * A read from a billing panel's own API, for what its webhook does not carry (Blesta's
 * Services.addAfter has no package or e-mail; HostBill's account hooks have no e-mail). When
 * the panel cannot be asked, the delivery is answered 503 with Retry-After: nothing is stored,
 * and the panel's (or its admin's) retry brings it again.
 */
export async function panelGet(panel: string, url: URL, init: { headers?: Record<string, string>; method?: "GET" | "POST"; form?: Record<string, string>; timeoutMs?: number }): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method ?? "GET",
      headers: { accept: "application/json", ...(init.form ? { "content-type": "application/x-www-form-urlencoded" } : {}), ...init.headers },
      body: init.form ? new URLSearchParams(init.form).toString() : undefined,
      redirect: "error",
      signal: AbortSignal.timeout(init.timeoutMs ?? 5_000),
    });
  } catch (err) {
    throw unavailable(panel, url, (err as Error).name === "TimeoutError" ? "timed out" : "unreachable");
  }
  const text = await res.text();
  if (res.status === 404) return undefined;
  if (!res.ok) throw unavailable(panel, url, `answered HTTP ${res.status}`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw unavailable(panel, url, "answered something that is not JSON");
  }
}

function unavailable(panel: string, url: URL, why: string): ServiceUnavailableError {
  // The path only: the query may hold credentials (HostBill's api_key).
  return new ServiceUnavailableError(`the ${panel} API at ${url.origin}${url.pathname} ${why}; send the webhook again later`, 60);
}
