import { randomUUID } from "node:crypto";
import type { Command } from "commander";
import { BILLING_CYCLES } from "../../catalog/billing-cycles.js";
import { EVENT_TYPES } from "../../vocabulary/event-types.js";
import type { CliContext } from "../io.js";
import { CliError, EXIT, emit } from "../output.js";

interface TriggerOptions {
  serviceId: string;
  productId?: string;
  ip?: string;
  cycle: string;
  email: string;
  name: string;
  newIp?: string;
  newProductId?: string;
  nextDueDate?: string;
  url?: string;
  id?: string;
}

/** Builds, signs (with the first configured secret) and sends one event, like `stripe trigger`. */
export function triggerCommand(program: Command, cli: CliContext): void {
  program
    .command("trigger <event-type>")
    .description(`sign and send a test event to a running instance (${EVENT_TYPES.map((t) => t.replace("service.", "")).join(", ")})`)
    .requiredOption("--service-id <id>", "billing-panel service id")
    .option("--product-id <id>", "billing-panel product id (see config/products.json)")
    .option("--ip <ip>", "the service's IP")
    .option("--cycle <cycle>", `billing cycle: ${BILLING_CYCLES.join(", ")}`, "monthly")
    .option("--email <email>", "customer e-mail", "customer@example.com")
    .option("--name <name>", "customer name", "Test Customer")
    .option("--new-ip <ip>", "service.ip_changed: the new IP")
    .option("--new-product-id <id>", "service.product_changed: the new product")
    .option("--next-due-date <date>", "paid until (ISO date)")
    .option("--url <url>", "the instance's base URL (default: http://HOST:PORT from the configuration)")
    .option("--id <webhook-id>", "webhook-id to send (default: a new one); repeat one to see deduplication")
    .option("--json", "machine-readable output")
    .action(async (eventType: string, o: TriggerOptions, cmd: Command) => {
      // Imported when the command runs (see buildProgram).
      const [{ billingEventSchema, fieldErrors }, { signWebhook }, { configOrExit }] = await Promise.all([
        import("../../intake/event-schema.js"),
        import("../../webhooks/signature.js"),
        import("../context.js"),
      ]);
      const type = eventType.startsWith("service.") ? eventType : `service.${eventType}`;
      const event = {
        type,
        service: {
          id: o.serviceId,
          ...(o.productId ? { product_id: o.productId } : {}),
          ...(o.ip ? { ip: o.ip } : {}),
          billing_cycle: o.cycle,
          customer: { email: o.email, name: o.name },
          ...(o.nextDueDate ? { next_due_date: o.nextDueDate } : {}),
        },
        ...(o.newIp || o.newProductId ? { changes: { ...(o.newIp ? { ip: o.newIp } : {}), ...(o.newProductId ? { product_id: o.newProductId } : {}) } } : {}),
      };
      const check = billingEventSchema.safeParse(event);
      if (!check.success) {
        const lines = Object.entries(fieldErrors(check.error)).map(([k, v]) => `  ${k}: ${v.join("; ")}`);
        throw new CliError(["the event would be rejected:", ...lines].join("\n"), EXIT.usage);
      }
      const config = configOrExit(cli.io);
      const host = config.HOST === "0.0.0.0" ? "127.0.0.1" : config.HOST.includes(":") ? `[${config.HOST}]` : config.HOST;
      const base = (o.url ?? `http://${host}:${config.PORT}`).replace(/\/+$/, "");
      const body = JSON.stringify(event);
      const headers = signWebhook(config.WEBHOOK_SECRETS[0]!, o.id ?? `msg_${randomUUID()}`, body);
      let res: Response;
      try {
        res = await fetch(`${base}/webhooks/billing`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body,
          signal: AbortSignal.timeout(10_000),
        });
      } catch (err) {
        throw new CliError(`cannot reach ${base}: ${(err as Error).message} (is the service running? npm start)`);
      }
      const answer = (await res.json().catch(() => ({}))) as Record<string, unknown>;
      const data = { status: res.status, webhook_id: headers["webhook-id"], response: answer };
      emit(cli.output(cmd), data, () => `${res.status} ${JSON.stringify(answer)}  (webhook-id ${headers["webhook-id"]})`);
      if (res.status >= 400) throw new CliError(`the instance refused the event (HTTP ${res.status})`);
    });
}
