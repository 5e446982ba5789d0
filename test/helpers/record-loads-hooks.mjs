// The module hook of record-loads.mjs (it runs on Node's hooks thread): one line per loaded URL.
import { appendFileSync } from "node:fs";
import process from "node:process";

export async function load(url, context, nextLoad) {
  appendFileSync(process.env.LB_RECORD_LOADS, `${url}\n`);
  return nextLoad(url, context);
}
