import { createServer, type RequestListener, type Server } from "node:http";

/** Why the HTTP listener could not start, as one line naming the address and what to change. */
export class ListenError extends Error {
  constructor(
    readonly address: string,
    readonly code: string | undefined,
    reason: string,
  ) {
    super(`cannot listen on ${address}: ${reason}`);
    this.name = "ListenError";
  }
}

/** `host:port`, with an IPv6 address in brackets. */
export function hostPort(host: string, port: number): string {
  return `${host.includes(":") ? `[${host}]` : host}:${port}`;
}

function reasonFor(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case "EADDRINUSE":
      return "the address is in use (set PORT, or stop what holds it)";
    case "EADDRNOTAVAIL":
      return "not an address of this machine (set HOST)";
    case "EACCES":
      return "permission denied (ports below 1024 need privileges; set PORT)";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "the host name does not resolve (set HOST)";
    default:
      return err.code ?? err.message;
  }
}

/**
 * Listens with `http.createServer`, resolving on 'listening' and rejecting with a ListenError on
 * 'error'. Not `app.listen`: Express 5 calls its callback on an error too, which would let the
 * service carry on without a listener.
 */
export function listen(handler: RequestListener, port: number, host: string): Promise<Server> {
  const server = createServer(handler);
  return new Promise((ok, fail) => {
    const onError = (err: NodeJS.ErrnoException) => {
      server.off("listening", onListening);
      fail(new ListenError(hostPort(host, port), err.code, reasonFor(err)));
    };
    const onListening = () => {
      server.off("error", onError);
      ok(server);
    };
    server.once("error", onError);
    server.once("listening", onListening);
    server.listen(port, host);
  });
}
