// SPDX-License-Identifier: MIT
// Every answer of a running app to a varied request set, validated against the app's own
// OpenAPI document with ajv (JSON Schema draft 2020-12, ajv-formats).
//
//   node check-answers.cjs DOC.json URL
//
// For each request the answer's status must be documented: by the operation of its path and
// method (HEAD: the GET's, without a body), or else by the document's "x-canal-responses",
// the answers canal and libh2o give to any request (an unknown path, a method the path does
// not take, a malformed target, a limit). The answer's content type must be one the response
// lists, a JSON body must validate against its schema, and headers the response marks
// required must be there. Prints TAP-style "ok - " / "not ok - " lines.
'use strict';
const fs = require('fs');
const http = require('http');
const Ajv2020 = require('ajv/dist/2020');
const addFormats = require('ajv-formats');

const [docFile, base] = process.argv.slice(2);
const doc = JSON.parse(fs.readFileSync(docFile, 'utf8'));
const tag = docFile.replace(/.*\//, '');
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: 'doc.json', components: doc.components });

let failures = 0;
function ok(cond, what, why) {
    if (cond) console.log(`ok - ${tag}: ${what}`);
    else {
        failures++;
        console.log(`not ok - ${tag}: ${what}${why ? ': ' + why : ''}`);
    }
}

// A JSON value with its "#/..." references pointing into doc.json.
function rebase(v) {
    if (Array.isArray(v)) return v.map(rebase);
    if (v && typeof v === 'object') {
        const out = {};
        for (const [k, x] of Object.entries(v))
            out[k] = k === '$ref' && typeof x === 'string' && x.startsWith('#/') ? 'doc.json' + x : rebase(x);
        return out;
    }
    return v;
}

function resolve(obj) {
    while (obj && obj.$ref) obj = obj.$ref.slice(2).split('/').reduce((o, k) => o[k], doc);
    return obj;
}

// The operation for a raw request path (no query), and whether its path exists at all.
function findOperation(method, rawPath) {
    const m = method === 'HEAD' ? 'get' : method.toLowerCase();
    let pathFound = false;
    // literal paths before templates, as canal's router prefers them
    const paths = Object.keys(doc.paths).sort((a, b) => a.includes('{') - b.includes('{'));
    for (const p of paths) {
        // canal matches literal segments case-insensitively
        const re = new RegExp('^' + p.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+') + '$', 'i');
        if (!re.test(rawPath)) continue;
        pathFound = true;
        if (doc.paths[p][m]) return { path: p, op: doc.paths[p][m] };
    }
    return { pathFound };
}

function send(r) {
    return new Promise((done) => {
        const u = new URL(base);
        const req = http.request({ host: u.hostname, port: u.port, method: r.method, path: r.path,
                                   headers: r.headers || {}, agent: false }, (res) => {
            const chunks = [];
            res.on('data', (c) => chunks.push(c));
            res.on('end', () => done({ status: res.statusCode, headers: res.headers,
                                       body: Buffer.concat(chunks).toString('utf8') }));
            res.on('error', (e) => done({ error: e.message }));
        });
        req.on('error', (e) => done({ error: e.message }));
        if (r.body) req.write(r.body);
        req.end();
    });
}

function check(r, res) {
    const what = `${r.method} ${r.path.length > 60 ? r.path.slice(0, 60) + '...' : r.path} -> ${res.status}`;
    if (res.error) return ok(false, what, res.error);
    if (r.status && res.status !== r.status) return ok(false, what, `expected ${r.status}`);
    const rawPath = r.path.replace(/\?.*/, '');
    const found = findOperation(r.method, rawPath);
    const key = String(res.status);
    let resp = found.op && (found.op.responses[key] || doc['x-canal-responses'][key] || found.op.responses.default);
    if (!found.op) resp = doc['x-canal-responses'][key];
    if (!resp) return ok(false, what, `status ${key} is not documented for ${found.path || rawPath}`);
    resp = resolve(resp);
    for (const [h, def] of Object.entries(resp.headers || {}))
        if (resolve(def).required && res.headers[h.toLowerCase()] === undefined)
            return ok(false, what, `header ${h} is missing`);
    const noBody = r.method === 'HEAD' || res.status === 204 || res.status === 304;
    if (noBody) return ok(res.body === '', what, 'a body where none is sent');
    if (!resp.content) return ok(true, what + ' (the handler\'s answer: any body)');
    const type = res.headers['content-type'] || '';
    const media = resp.content[type] || resp.content[type.replace(/;.*/, '')];
    if (!media) return ok(false, what, `content type ${type} is not one of ${Object.keys(resp.content)}`);
    const schema = media.schema || {};
    if (!/[/+]json$/.test(type.replace(/;.*/, ''))) {
        // text and streams: a string where the schema says so
        return ok(schema.type === undefined || schema.type === 'string', what + ` (${type})`, 'not a string schema');
    }
    let body;
    try { body = JSON.parse(res.body); } catch (e) { return ok(false, what, 'the body is not JSON: ' + e.message); }
    const validate = ajv.compile(rebase(schema));
    ok(validate(body), what + ` (${type})`, ajv.errorsText(validate.errors) + ' in ' + res.body.slice(0, 200));
}

const long = 'a'.repeat(20000);
const requests = [
    // valid
    { method: 'GET', path: '/home/plaintext', status: 200 },
    { method: 'GET', path: '/home/json', status: 200 },
    { method: 'GET', path: '/home/employee/3', status: 200 },
    { method: 'GET', path: '/home/orders/3', status: 200 },
    { method: 'GET', path: '/home/orders/3?index=1&size=5', status: 200 },
    { method: 'GET', path: '/home/orders/0?customerid=VINET', status: 200 },
    { method: 'GET', path: '/home/orders.ndjson', status: 200 },
    { method: 'GET', path: '/home/employees', status: 200 },
    { method: 'GET', path: '/home/orders.html', status: 200 },
    { method: 'GET', path: '/api/woo', status: 200 },
    { method: 'GET', path: '/health/live' },
    { method: 'GET', path: '/health/ready' },
    { method: 'GET', path: '/metrics' },
    { method: 'GET', path: '/HOME/JSON', status: 200 },
    // invalid values
    { method: 'GET', path: '/home/employee/99', status: 404 },
    { method: 'GET', path: '/home/employee/x', status: 404 },
    { method: 'GET', path: '/home/employee/99999999999', status: 404 },
    { method: 'GET', path: '/home/orders/3?size=0', status: 400 },
    { method: 'GET', path: '/home/orders/3?size=101', status: 400 },
    { method: 'GET', path: '/home/orders/3?size=abc', status: 400 },
    { method: 'GET', path: '/home/orders/3?index=-1&size=x', status: 400 },
    // wrong method
    { method: 'POST', path: '/home/json', status: 405 },
    { method: 'DELETE', path: '/home/employee/3', status: 405 },
    { method: 'PUT', path: '/api/woo', status: 405 },
    // unknown paths
    { method: 'GET', path: '/nope', status: 404 },
    { method: 'GET', path: '/home', status: 404 },
    { method: 'GET', path: '/home/employee', status: 404 },
    { method: 'POST', path: '/nope', status: 404 },
    // malformed percent-escapes
    { method: 'GET', path: '/home/employee/%zz', status: 400 },
    { method: 'GET', path: '/home/%4', status: 400 },
    { method: 'GET', path: '/nope/%00', status: 400 },
    { method: 'GET', path: '/home/orders/3?size=%zz', status: 400 },
    { method: 'GET', path: '/home/orders/3?customerid=%G1', status: 400 },
    { method: 'GET', path: '/home/json?x=%', status: 400 },
    // HEAD
    { method: 'HEAD', path: '/home/json', status: 200 },
    { method: 'HEAD', path: '/home/employee/3', status: 200 },
    { method: 'HEAD', path: '/home/employee/99', status: 404 },
    { method: 'HEAD', path: '/nope', status: 404 },
    // limits
    { method: 'GET', path: '/home/json?' + long, status: 414 },
    { method: 'GET', path: '/home/json', headers: { 'x-big': 'b'.repeat(70000) }, status: 431 },
    { method: 'POST', path: '/home/json', body: Buffer.alloc(3 << 20), status: 413 },
];

(async () => {
    for (const r of requests) check(r, await send(r));
    process.exit(failures ? 1 : 0);
})();
