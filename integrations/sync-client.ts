// Copies the one provisioning API client (integrations/shared/LicenseBridgeClient.php) into each
// panel module: a panel installs one folder, so each module carries its own copy. Edit the
// source only, then run `npm run integrations:sync`; test/integrations/shared-client.test.ts
// fails while a copy differs. `--check` only reports.
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(fileURLToPath(import.meta.url));
export const SOURCE = join(root, "shared/LicenseBridgeClient.php");
/** Where each module keeps its copy, in the panel's own layout. */
export const COPIES = [
  "whmcs/modules/servers/license_bridge/lib/LicenseBridgeClient.php",
  "blesta/components/modules/license_bridge/lib/LicenseBridgeClient.php",
  "fossbilling/library/Plugin/LicenseBridge/LicenseBridgeClient.php",
  "paymenter/extensions/Servers/LicenseBridge/LicenseBridgeClient.php",
  "hostbill/includes/modules/Hosting/license_bridge/lib/LicenseBridgeClient.php",
].map((p) => join(root, p));

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes("--check");
  const source = readFileSync(SOURCE);
  let stale = 0;
  for (const copy of COPIES) {
    const same = existsSync(copy) && readFileSync(copy).equals(source);
    if (same) continue;
    stale++;
    if (check) {
      console.error(`stale: ${relative(root, copy)}`);
    } else {
      mkdirSync(dirname(copy), { recursive: true });
      copyFileSync(SOURCE, copy);
      console.log(`wrote ${relative(root, copy)}`);
    }
  }
  if (check && stale) process.exit(1);
}
