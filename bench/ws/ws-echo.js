// SPDX-License-Identifier: MIT
// Node's ws (test/npm, build/npm) as a WebSocket echo peer: every message back as it came.
//   NODE_PATH=build/npm/node_modules node bench/ws/ws-echo.js PORT
'use strict';
const { WebSocketServer } = require('ws');
const port = Number(process.argv[2] || 8080);
const wss = new WebSocketServer({ host: '127.0.0.1', port, perMessageDeflate: false, maxPayload: 1 << 20 });
wss.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
});
wss.on('listening', () => console.error(`ws-echo listening on http://127.0.0.1:${port}`));
process.on('SIGTERM', () => process.exit(0));
