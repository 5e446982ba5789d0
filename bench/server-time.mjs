// The time a server took for each request, measured inside its process: from the moment Node
// hands the parsed request to the app (diagnostics channel `http.server.request.start`) to the
// moment the last byte of the answer is handed to the kernel (`http.server.response.finish`).
// The bench's own instrument, added from outside: the product's code knows nothing of it.
import { subscribe } from "node:diagnostics_channel";

/** Starts recording; `drain()` returns the times (ms) since the previous drain, in finishing order. */
export function recordServerTimes() {
  const started = new WeakMap();
  let times = [];
  subscribe("http.server.request.start", ({ response }) => started.set(response, performance.now()));
  subscribe("http.server.response.finish", ({ response }) => {
    const t = started.get(response);
    if (t !== undefined) times.push(performance.now() - t);
  });
  return {
    drain() {
      const out = times;
      times = [];
      return out;
    },
  };
}
