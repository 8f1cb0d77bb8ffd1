// A port for another process to bind later (`PORT` for `npm start`, a sample's server).
//
// A port the OS hands out for `listen(0)` and that is closed again can be handed out again at once: with
// three test files at once, another file's server, redis-server or workerd took it before the child bound it
// (CI: "bind(): Address already in use"). A port below the OS's ephemeral range is never handed out for
// `listen(0)`, so only something that names it can take it; nothing in the suite names these.
import fs from "node:fs";
import net from "node:net";

/** The first port Linux hands out for `listen(0)`; 32768 where /proc does not say. */
function ephemeralLow() {
  try {
    return Number(fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || 32768;
  } catch {
    return 32768;
  }
}

/** @param {number} port @returns {Promise<boolean>} whether 127.0.0.1:port could be bound now */
function bindable(port) {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** @returns {Promise<number>} a port free now on 127.0.0.1, between 20000 and the ephemeral range */
export async function childPort() {
  const low = 20_000;
  const high = Math.max(low + 1, ephemeralLow());
  for (;;) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (await bindable(port)) return port;
  }
}
