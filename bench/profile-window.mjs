// A CPU profile of the measured window only (not the start-up, not the warm-up), for the
// servers the benches start: the load client sends `{ profile: "start" }` with its first stats
// request and `{ profile: "stop" }` with its last, and the profile is written to
// `<dir>/<name>-<pid>.cpuprofile` (read it with `npx tsx bench/cpu-profile.ts`). The inspector
// session is in-process, V8's sampling profiler as `node --cpu-prof` uses it.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { join } from "node:path";

let session;

const post = (method, params) =>
  new Promise((ok, fail) => session.post(method, params, (err, result) => (err ? fail(err) : ok(result))));

/** Handles a stats message's `profile` field; resolves once the profile is started or written. */
export async function profileWindow(msg, name) {
  if (msg?.profile === "start") {
    session = new Session();
    session.connect();
    await post("Profiler.enable");
    // 200 µs between samples (V8's default is 1 ms): short functions are seen, at some cost.
    await post("Profiler.setSamplingInterval", { interval: Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 200) });
    await post("Profiler.start");
  } else if (msg?.profile === "stop" && session) {
    const { profile } = await post("Profiler.stop");
    const path = join(msg.dir, `${name}-${process.pid}.cpuprofile`);
    writeFileSync(path, JSON.stringify(profile));
    session.disconnect();
    session = undefined;
    return path;
  }
  return undefined;
}
