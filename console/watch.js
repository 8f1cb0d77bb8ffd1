// One lock's state pushed by the service as it changes (docs/API.md, "Watching a lock"): a WebSocket to
// the lock's .../watch, the key offered as a subprotocol (a browser cannot set headers on a WebSocket, and a
// key never goes into a URL). onState gets every state; onDown is told when the socket did not open or
// closed unasked, and the panel reads the state itself meanwhile.

/** Watches the lock at `path` with `key`; close() ends it. */
export function watchLock(path, key, { onState, onDown }) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${scheme}//${location.host}${path}/watch`, ["holdfast.v1", keyProtocol(key)]);
  let stopped = false;
  ws.addEventListener("open", () => {
    // Closed while it was still opening: it ends now (closing a socket not yet open makes the browser warn).
    if (stopped) ws.close(1000);
    else ws.send(JSON.stringify({ type: "watch" }));
  });
  ws.addEventListener("message", (event) => {
    let message;
    try {
      message = JSON.parse(String(event.data));
    } catch {
      return;
    }
    if (message?.type === "state" && message.state && typeof message.state === "object") onState(message.state);
  });
  ws.addEventListener("close", () => {
    if (!stopped) onDown();
  });
  return {
    close() {
      stopped = true;
      if (ws.readyState !== WebSocket.CONNECTING) ws.close(1000);
    },
  };
}

/** The key as the subprotocol the service reads it from: holdfast.key.<base64url of its UTF-8, unpadded>. */
function keyProtocol(key) {
  let bin = "";
  for (const byte of new TextEncoder().encode(key)) bin += String.fromCharCode(byte);
  return `holdfast.key.${btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
}
