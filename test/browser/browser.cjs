// SPDX-License-Identifier: MIT
// Drives Debian's headless Chromium (playwright-core, no browser download) against running apps:
//
//   node browser.cjs CHROMIUM DOCS_URL ERROR_URL SHOT_DIR
//
//  1. DOCS_URL/docs (the demo in controller mode): Swagger UI renders one operation block per
//     operation of DOCS_URL/openapi.json, with the same methods and paths, and the page raises
//     no error (its Content-Security-Policy allows no inline script: Swagger UI must not need
//     one).
//  2. ERROR_URL (canal-testapp --env development, whose fail/{*rest} route fails): the
//     development error page shows a request that carries script in its path (raw and
//     percent-encoded), query and headers as text, and none of it runs: window.__pwned stays
//     undefined and the page has no script element.
// Screenshots go to SHOT_DIR. Prints TAP-style "ok - " / "not ok - " lines.
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const { chromium } = require('playwright-core');

const [exe, docsUrl, errorUrl, shots] = process.argv.slice(2);
let failures = 0;
function ok(cond, what, why) {
    if (cond) console.log(`ok - browser: ${what}`);
    else {
        failures++;
        console.log(`not ok - browser: ${what}${why ? ': ' + why : ''}`);
    }
    return cond;
}

// A GET with bytes a browser would percent-encode: Node sends the target as given.
function rawGet(url, target, headers) {
    return new Promise((resolve, reject) => {
        const u = new URL(url);
        const req = http.request({ host: u.hostname, port: u.port, path: target, headers }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], body }));
        });
        req.on('error', reject);
        req.end();
    });
}

async function docsPage(browser) {
    const doc = await (await fetch(`${docsUrl}/openapi.json`)).json();
    const want = [];
    for (const [p, item] of Object.entries(doc.paths))
        for (const m of Object.keys(item)) want.push(`${m.toUpperCase()} ${p}`);
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    await page.goto(`${docsUrl}/docs`);
    // Swagger UI renders after fetching the document: wait for every operation block.
    await page.waitForFunction((n) => document.querySelectorAll('.opblock').length >= n,
                               want.length, { timeout: 120000 });
    await page.waitForSelector('.info .title', { timeout: 60000 });
    const got = await page.$$eval('.opblock', (blocks) => blocks.map((b) => {
        const m = b.querySelector('.opblock-summary-method');
        const p = b.querySelector('.opblock-summary-path');
        return `${m ? m.textContent.trim() : '?'} ${p ? (p.getAttribute('data-path') || p.textContent.trim()) : '?'}`;
    }));
    ok(got.length === want.length, `/docs renders ${want.length} operation blocks`, `got ${got.length}`);
    const missing = want.filter((w) => !got.includes(w));
    ok(missing.length === 0, '/docs shows every method and path of /openapi.json', `missing ${missing.join(', ')}`);
    const title = await page.textContent('.info .title');
    ok(title.includes(doc.info.title), `/docs shows the title "${doc.info.title}"`, title);
    // Open one operation: its declared parameters are listed.
    const orders = page.locator('.opblock', { has: page.locator('[data-path="/home/orders/{id}"]') });
    await orders.locator('.opblock-summary').first().click();
    await page.waitForSelector('.parameters tr[data-param-name="size"]', { timeout: 60000 });
    const params = await page.$$eval('.parameters tr[data-param-name]', (rows) => rows.map((r) => r.getAttribute('data-param-name')));
    ok(['id', 'customerid', 'index', 'size'].every((n) => params.includes(n)),
       '/docs lists the declared parameters of /home/orders/{id}', params.join(','));
    ok(errors.length === 0, '/docs raises no script error', errors.join(' | '));
    await page.screenshot({ path: path.join(shots, 'docs.png'), fullPage: true });
    await page.close();
}

async function errorPage(browser) {
    const page = await browser.newPage();
    const pwned = () => page.evaluate(() => typeof window.__pwned);
    const alerts = [];
    page.on('dialog', async (d) => { alerts.push(d.message()); await d.dismiss(); });

    // 1. Raw bytes a browser would not send: literal <script> in the path, query and a header.
    const raw = await rawGet(errorUrl, '/fail/<script>window.__pwned=1</script>?q=<script>window.__pwned=2</script>',
                             { 'X-Evil': '<script>window.__pwned=3</script>', 'X-Img': '<img src=x onerror="window.__pwned=4">' });
    ok(raw.status === 500 && /^text\/html/.test(raw.type), 'the failing route answers the development error page', `${raw.status} ${raw.type}`);
    await page.setContent(raw.body, { waitUntil: 'load' });
    let text = await page.innerText('body');
    ok(text.includes('/fail/<script>window.__pwned=1</script>'), 'a <script> in the path shows as text');
    ok(text.includes('<script>window.__pwned=2</script>'), 'a <script> in the query shows as text');
    ok(text.includes('<script>window.__pwned=3</script>'), 'a <script> in a header shows as text');
    ok(text.includes('<img src=x onerror="window.__pwned=4">'), 'an <img onerror> in a header shows as text');
    ok(await page.$$eval('script', (s) => s.length) === 0 && await page.$$eval('img', (s) => s.length) === 0,
       'the page has no script or img element');
    ok(await pwned() === 'undefined', 'nothing from the request ran (window.__pwned is undefined)');
    await page.screenshot({ path: path.join(shots, 'error-page-raw.png'), fullPage: true });

    // 2. As a browser sends it: the path and query percent-encoded (the route value is decoded
    //    by canal before it is shown), a header as is.
    await page.setExtraHTTPHeaders({ 'X-Evil': '<script>window.__pwned=5</script>' });
    const resp = await page.goto(`${errorUrl}/fail/<img src=x onerror=window.__pwned=6>?q=<script>window.__pwned=7</script>`);
    ok(resp.status() === 500, 'the browser gets the development error page', String(resp.status()));
    text = await page.innerText('body');
    ok(text.includes('<img src=x onerror=window.__pwned=6>'), 'the decoded route value shows as text');
    ok(text.includes('<script>window.__pwned=5</script>'), 'the header shows as text');
    ok(text.includes('boom <script>alert(1)</script> & "quotes"'), "the handler's error text shows as text");
    ok(await page.$$eval('script', (s) => s.length) === 0 && await page.$$eval('img', (s) => s.length) === 0,
       'the browser-loaded page has no script or img element');
    ok(await pwned() === 'undefined' && alerts.length === 0, 'nothing ran in the browser-loaded page', alerts.join(','));
    await page.screenshot({ path: path.join(shots, 'error-page.png'), fullPage: true });
    await page.close();
}

async function main() {
    fs.mkdirSync(shots, { recursive: true });
    const browser = await chromium.launch({ executablePath: exe, timeout: 180000 });
    try {
        await docsPage(browser).catch((e) => ok(false, '/docs', e.message.split('\n')[0]));
        await errorPage(browser).catch((e) => ok(false, 'error page', e.message.split('\n')[0]));
    } finally {
        await browser.close();
    }
    process.exitCode = failures ? 1 : 0;
}

main().catch((e) => { console.log(`not ok - browser: ${e.message.split('\n')[0]}`); process.exitCode = 1; });
