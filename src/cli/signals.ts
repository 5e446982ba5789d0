/** Resolves on the first SIGTERM or SIGINT; a second one exits at once (an operator in a hurry). */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off("SIGTERM", onSignal);
      process.off("SIGINT", onSignal);
      const again = () => process.exit(130);
      process.once("SIGTERM", again);
      process.once("SIGINT", again);
      resolve(signal);
    };
    process.on("SIGTERM", onSignal);
    process.on("SIGINT", onSignal);
  });
}
