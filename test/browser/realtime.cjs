// SPDX-License-Identifier: MIT
// Drives Debian's headless Chromium (playwright-core, no browser download) against a running
// canal-realtime:
//
//   node realtime.cjs CHROMIUM URL SHOT_DIR
//
// The page at URL/ opens an EventSource on /sse/ticks?count=20&interval_ms=500 and a WebSocket
// to /ws/echo that sends the input's text when it opens; each side writes its state into the
// DOM (data-ticks, data-state, data-echo). Checks: ticks arrive in order, the stream ends after
// tick 20 without a reconnect loop, the echo of the first message comes back, a second message
// typed and sent with the button comes back too, and the page raises no error. Every wait is
// for a state of the page (generous timeouts for a loaded machine), never for a fixed time.
// Prints TAP-style "ok - " / "not ok - " lines.
'use strict';
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const [exe, url, shots] = process.argv.slice(2);
const WAIT = { timeout: 120000 };
let failures = 0;
function ok(cond, what, why) {
    if (cond) console.log(`ok - realtime-browser: ${what}`);
    else {
        failures++;
        console.log(`not ok - realtime-browser: ${what}${why ? ': ' + why : ''}`);
    }
    return cond;
}

async function realtimePage(browser) {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    const resp = await page.goto(`${url}/`);
    ok(resp.status() === 200, 'GET / answers the page', String(resp.status()));

    // WebSocket: the message sent on open comes back.
    await page.waitForFunction(() => document.getElementById('echo').dataset.echo === 'hello', null, WAIT);
    ok(true, 'the WebSocket to /ws/echo opened and echoed the message sent on open');
    ok(await page.getAttribute('#echo', 'data-state') === 'open', 'the WebSocket is still open after the echo');
    // A second message, typed and sent with the button.
    const msg = `from chromium ${Date.now()} é✓`;
    await page.fill('#msg', msg);
    await page.click('#send');
    await page.waitForFunction((m) => document.getElementById('echo').dataset.echo === m, msg, WAIT);
    ok((await page.textContent('#echo')).includes(`echo: ${msg}`), 'a message sent with the button is echoed, UTF-8 intact');

    // Server-sent events: ticks arrive in order; the stream ends after the 20th.
    await page.waitForFunction(() => Number(document.getElementById('ticks').dataset.ticks) >= 3, null, WAIT);
    ok(true, 'EventSource on /sse/ticks received ticks');
    await page.waitForFunction(() => document.getElementById('ticks').dataset.state === 'ended', null, WAIT);
    const text = await page.textContent('#ticks');
    const ids = [...text.matchAll(/^tick (\d+) \{"i":(\d+)\}$/gm)].map((m) => [Number(m[1]), Number(m[2])]);
    const want = Array.from({ length: 20 }, (_, i) => i + 1);
    ok(ids.length === 20 && ids.every(([id, i], k) => id === want[k] && i === want[k]),
       'the page shows ticks 1..20 in order, each id matching its data', text.replace(/\n/g, '|').slice(0, 200));
    ok(await page.getAttribute('#ticks', 'data-ticks') === '20', 'data-ticks is 20 when the stream has ended');
    ok(errors.length === 0, 'the page raises no script error', errors.join(' | '));
    await page.screenshot({ path: path.join(shots, 'realtime.png'), fullPage: true });
    await page.close();
}

async function main() {
    fs.mkdirSync(shots, { recursive: true });
    const browser = await chromium.launch({ executablePath: exe, timeout: 180000 });
    try {
        await realtimePage(browser).catch((e) => ok(false, 'the realtime page', e.message.split('\n')[0]));
    } finally {
        await browser.close();
    }
    process.exitCode = failures ? 1 : 0;
}

main().catch((e) => { console.log(`not ok - realtime-browser: ${e.message.split('\n')[0]}`); process.exitCode = 1; });
