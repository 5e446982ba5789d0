// The baseline of `bench:console`: bare Express 5 answering GET /page/<bytes> with an HTML page
// of that many bytes, built once per size, under plain node in a process of its own, as the
// bridge runs. What any Express app pays to answer a page that big over loopback, and nothing more.
// Answers `{ serverTimes: true }` over IPC with its per-request times (server-time.mjs).
import express from "express";
import { recordServerTimes } from "./server-time.mjs";

const times = recordServerTimes();
const pages = new Map();
const pageOf = (bytes) => {
  let body = pages.get(bytes);
  if (body === undefined) {
    const head = "<!doctype html><html><head><title>page</title></head><body>";
    const tail = "</body></html>";
    body = head + "<p>x</p>".repeat(Math.max(0, Math.ceil((bytes - head.length - tail.length) / 8))) + tail;
    pages.set(bytes, body);
  }
  return body;
};

const app = express();
app.get("/page/:bytes", (req, res) => {
  res.type("html").send(pageOf(Number(req.params.bytes)));
});
const server = app.listen(0, "127.0.0.1", () => console.log(`READY ${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` })}`));
process.on("message", (msg) => {
  if (msg?.serverTimes) process.send({ times: times.drain() });
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
