// SPDX-License-Identifier: MIT
// Node's ws (the most used WebSocket client and server) against canal-realtime: echo and chat.
//   node realtime_ws.cjs PORT     prints TAP lines; NODE_PATH has build/npm/node_modules
const WebSocket = require('ws');
const port = process.argv[2];
const ok = (name) => console.log(`ok - ${name}`);
const check = (name, want, got) => (JSON.stringify(want) === JSON.stringify(got)
    ? ok(name) : console.log(`not ok - ${name}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`));

const open = (path) => new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`);
    const queue = [];
    const waiting = [];
    ws.on('message', (data, isBinary) => {
        const m = isBinary ? ['binary', Buffer.from(data).toString('hex')] : ['text', data.toString()];
        if (waiting.length) waiting.shift()(m); else queue.push(m);
    });
    ws.next = () => new Promise((res) => (queue.length ? res(queue.shift()) : waiting.push(res)));
    ws.on('open', () => resolve(ws));
    ws.on('error', reject);
});

(async () => {
    const timer = setTimeout(() => { console.log('not ok - node ws: timed out'); process.exit(1); }, 30000);
    const e = await open('/ws/echo');
    e.send('node text');
    check('node ws: echo text', ['text', 'node text'], await e.next());
    e.send(Buffer.from([0, 1, 2, 255]));
    check('node ws: echo binary', ['binary', '000102ff'], await e.next());
    e.send('x'.repeat(70000));
    check('node ws: echo 70000 bytes', 70000, (await e.next())[1].length);
    const closed = new Promise((res) => e.on('close', (code) => res(code)));
    e.close(4000, 'bye');
    check('node ws: Close 4000 answered with 4000', 4000, await closed);
    const a = await open('/ws/chat/node-room');
    const b = await open('/ws/chat/node-room');
    await new Promise((res) => setTimeout(res, 300));
    a.send('from node a');
    check('node ws: chat reaches the sender and the other member',
        [['text', 'from node a'], ['text', 'from node a']], [await a.next(), await b.next()]);
    a.close();
    b.close();
    clearTimeout(timer);
})().catch((err) => { console.log(`not ok - node ws: ${err}`); process.exit(1); });
