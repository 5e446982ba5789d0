/** Resolves on the first SIGTERM or SIGINT; a second one exits at once. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.once("SIGTERM", () => process.exit(130));
      process.once("SIGINT", () => process.exit(130));
      resolve(signal);
    };
    process.once("SIGTERM", onSignal);
    process.once("SIGINT", onSignal);
  });
}
