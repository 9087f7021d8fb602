// SPDX-License-Identifier: MIT
// Checks an app's OpenAPI document against its route table, with a real validator.
//
//   node check-openapi.cjs DOC.json ROUTES.txt [EXPECT.json] [--declared]
//
// DOC.json is what the app serves; ROUTES.txt its route table (canal_router_list():
// "METHOD TEMPLATE [NAME]" a line). Prints TAP-style "ok - " / "not ok - " lines.
//  1. The document validates as OpenAPI 3.1 (@apidevtools/swagger-parser).
//  2. Every route is described: each path it can match (shorter ones when its last parameters
//     may be left out), with the route's method, its template in x-canal-template, and one path
//     parameter per parameter whose schema says what the constraints accept. The template is
//     parsed here again, independently of canal's C code, from the grammar in docs/routing.md.
//  3. Nothing else is described (canal's own /openapi.json and /docs routes are left out).
//  4. EXPECT.json lists what declarations add (controller mode): a subset of an operation
//     that must be found in it.
//  5. WebSocket routes (--websocket=TEMPLATE, once per route): the GET is marked
//     x-websocket: true and answers 101 (naming the WebSocket protocol, with Upgrade and
//     Sec-WebSocket-Accept) and the handshake's refusals 400, 405 and 426 as problem details
//     (426 with Sec-WebSocket-Version); the route's OPTIONS (a 405 like any other method) is
//     left out. No other operation has x-websocket.
// --declared: the app declares parameter types (controller mode), which may replace what a
// plain {x} says (a string).
'use strict';
const fs = require('fs');
const SwaggerParser = require('@apidevtools/swagger-parser');

const [docFile, routesFile, expectFile] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const declared = process.argv.includes('--declared');
const websockets = process.argv.filter((a) => a.startsWith('--websocket=')).map((a) => a.slice(12));
const doc = JSON.parse(fs.readFileSync(docFile, 'utf8'));
const tag = docFile.replace(/.*\//, '');
let failures = 0;
function ok(cond, what, why) {
    if (cond) console.log(`ok - ${tag}: ${what}`);
    else {
        failures++;
        console.log(`not ok - ${tag}: ${what}${why ? ': ' + why : ''}`);
    }
    return cond;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

// One template segment: {kind: 'literal', text} or {kind: 'param', name, catchAll, optional,
// def, constraints: [{name, arg}]}.
function parseTemplate(t) {
    if (t.startsWith('/')) t = t.slice(1);
    const segs = [];
    let i = 0;
    while (i < t.length) {
        if (t[i] === '{' && t[i + 1] !== '{') {
            let j = i + 1, text = '';
            for (;;) {
                if (t[j] === '}' && t[j + 1] === '}') { text += '}'; j += 2; }
                else if (t[j] === '{' && t[j + 1] === '{') { text += '{'; j += 2; }
                else if (t[j] === '}') break;
                else text += t[j++];
            }
            segs.push(parseParam(text));
            i = j + 1;
        } else {
            let text = '';
            while (i < t.length && t[i] !== '/') {
                if ((t[i] === '{' || t[i] === '}') && t[i + 1] === t[i]) i++;
                text += t[i++];
            }
            segs.push({ kind: 'literal', text });
        }
        if (t[i] === '/') i++;
    }
    return segs;
}

function parseParam(s) {
    const p = { kind: 'param', catchAll: 0, optional: false, def: null, constraints: [] };
    let i = 0;
    while (s[i] === '*') { p.catchAll++; i++; }
    const start = i;
    while (i < s.length && !':=?'.includes(s[i])) i++;
    p.name = s.slice(start, i);
    while (s[i] === ':') {
        let k = i + 1;
        while (k < s.length && /[A-Za-z]/.test(s[k])) k++;
        const c = { name: s.slice(i + 1, k).toLowerCase(), arg: null };
        i = k;
        if (s[i] === '(') {
            let e = i + 1;
            while (!(s[e] === ')' && (e + 1 === s.length || ':?='.includes(s[e + 1])))) e++;
            c.arg = s.slice(i + 1, e);
            i = e + 1;
        }
        p.constraints.push(c);
    }
    if (s[i] === '?') p.optional = true;
    else if (s[i] === '=') p.def = s.slice(i + 1);
    return p;
}

// What the schema of a path parameter must say, from its constraints: [keyword, value] pairs,
// and the patterns (several regexes: each must be somewhere in the schema).
function expectedSchema(p) {
    const want = [], patterns = [];
    let type = null, format = null;
    const setType = (t, f) => { if (!type) { type = t; format = f; } };
    for (const c of p.constraints) {
        const args = c.arg === null ? [] : c.arg.split(',').map(Number);
        switch (c.name) {
        case 'int': setType('integer', 'int32'); break;
        case 'long': setType('integer', 'int64'); break;
        case 'bool': setType('boolean'); break;
        case 'double': setType('number', 'double'); break;
        case 'guid': setType('string', 'uuid'); break;
        case 'alpha': setType('string'); patterns.push('^[A-Za-z]+$'); break;
        case 'min': setType('integer', 'int64'); want.push(['minimum', args[0]]); break;
        case 'max': setType('integer', 'int64'); want.push(['maximum', args[0]]); break;
        case 'range':
            setType('integer', 'int64');
            want.push(['minimum', args[0]], ['maximum', args[1]]);
            break;
        case 'length':
            setType('string');
            want.push(['minLength', args[0]], ['maxLength', args.length > 1 ? args[1] : args[0]]);
            break;
        case 'minlength': setType('string'); want.push(['minLength', args[0]]); break;
        case 'maxlength': setType('string'); want.push(['maxLength', args[0]]); break;
        // canal writes a route regex (PCRE2) as its ECMA-262 translation (docs/routing.md):
        // a pattern that JavaScript compiles, compared with canal's matching by
        // test/openapi/check-patterns.cjs
        case 'regex': setType('string'); patterns.push(null); break;
        default: throw new Error(`unknown constraint ${c.name}`);
        }
    }
    if (type) want.push(['type', type]);
    if (format) want.push(['format', format]);
    if (!type && !declared) want.push(['type', 'string']);
    if (p.def !== null) {
        const t = type || 'string';
        want.push(['default', t === 'integer' || t === 'number' ? Number(p.def)
                   : t === 'boolean' ? p.def.toLowerCase() === 'true' : p.def]);
    }
    return { want, patterns };
}

function pathOf(segs, k) {
    if (k === 0) return '/';
    return segs.slice(0, k).map((s) => '/' + (s.kind === 'literal'
        ? s.text.replace(/[{}]/g, (c) => (c === '{' ? '%7B' : '%7D'))
        : `{${s.name}}`)).join('');
}

function subset(want, got, where = '') {
    if (want === null || typeof want !== 'object') {
        return want === got ? null : `${where || 'value'}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`;
    }
    if (got === null || typeof got !== 'object') return `${where}: missing`;
    for (const k of Object.keys(want)) {
        const why = subset(want[k], got[k], `${where}/${k}`);
        if (why) return why;
    }
    return null;
}

async function main() {
    try {
        ok(/^3\.1\./.test(doc.openapi), 'declares OpenAPI 3.1', doc.openapi);
        await SwaggerParser.validate(JSON.parse(JSON.stringify(doc)));
        ok(true, 'validates with @apidevtools/swagger-parser');
    } catch (e) {
        ok(false, 'validates with @apidevtools/swagger-parser', e.message.split('\n').slice(0, 6).join(' | '));
    }
    const resolved = await SwaggerParser.dereference(JSON.parse(JSON.stringify(doc))).catch(() => doc);

    const lines = fs.readFileSync(routesFile, 'utf8').split('\n').filter((l) => l !== '');
    const expected = new Set();
    let routes = 0, params = 0;
    for (const line of lines) {
        const sp = line.indexOf(' ');
        const method = line.slice(0, sp);
        const rest = line.slice(sp + 1);
        const sp2 = rest.lastIndexOf(' ');
        // the template has no space in these apps; a name follows it after one
        const template = sp2 >= 0 && !rest.slice(sp2 + 1).includes('}') && rest.indexOf(' ') === sp2
            ? rest.slice(0, sp2) : rest;
        if (template === '/openapi.json' || template === '/docs' || template.startsWith('/docs/')) {
            const t = template;
            const found = Object.keys(doc.paths || {}).includes(t);
            ok(!found, `canal's own ${t} is left out`);
            continue;
        }
        const field = method.toLowerCase();
        if (websockets.includes(template) && field !== 'get') {
            const path = pathOf(parseTemplate(template), parseTemplate(template).length);
            ok(!(doc.paths[path] && doc.paths[path][field]), `WebSocket ${template}: its ${method} is left out`);
            continue;
        }
        if (!METHODS.includes(field) || method !== method.toUpperCase()) {
            const anywhere = Object.values(doc.paths || {}).some((item) => field in item);
            ok(!anywhere, `${method} ${template}: a method OpenAPI has no field for is left out`);
            continue;
        }
        const segs = parseTemplate(template);
        let required = segs.length;
        while (required > 0) {
            const s = segs[required - 1];
            if (s.kind === 'literal' || (!s.catchAll && !s.optional && s.def === null)) break;
            required--;
        }
        routes++;
        for (let k = segs.length; k >= required; k--) {
            const path = pathOf(segs, k);
            const key = `${field} ${path}`;
            if (expected.has(key)) continue; // an earlier route describes it
            expected.add(key);
            const op = resolved.paths && resolved.paths[path] && resolved.paths[path][field];
            if (!ok(op, `${method} ${template} is described as ${field} ${path}`)) continue;
            ok(op['x-canal-template'] === template, `${key}: x-canal-template`, op['x-canal-template']);
            const pathParams = (op.parameters || []).filter((p) => p.in === 'path');
            const names = segs.slice(0, k).filter((s) => s.kind === 'param');
            ok(pathParams.length === names.length, `${key}: ${names.length} path parameters`,
               pathParams.map((p) => p.name).join(','));
            for (const s of names) {
                params++;
                const p = pathParams.find((x) => x.name === s.name);
                if (!ok(p && p.required === true, `${key}: {${s.name}} is a required path parameter`)) continue;
                const { want, patterns } = expectedSchema(s);
                const schema = p.schema || {};
                const bad = want.filter(([kw, v]) => schema[kw] !== v)
                    .map(([kw, v]) => `${kw} ${JSON.stringify(schema[kw])} (want ${JSON.stringify(v)})`);
                const have = [schema.pattern, ...(schema.allOf || []).map((x) => x.pattern)];
                for (const re of patterns) if (re !== null && !have.includes(re)) bad.push(`pattern ${re} missing`);
                const translated = have.filter((x) => typeof x === 'string' && !patterns.includes(x));
                const nregex = patterns.filter((x) => x === null).length;
                if (translated.length !== nregex) bad.push(`${translated.length} patterns for ${nregex} regexes`);
                for (const x of translated) {
                    try { new RegExp(x, 'u'); } catch (e) { bad.push(`pattern ${x}: ${e.message}`); }
                }
                if (s.catchAll) {
                    if (p['x-canal-catch-all'] !== true) bad.push('x-canal-catch-all missing');
                }
                const what = [s.catchAll ? 'catch-all' : '', ...s.constraints.map((c) => c.name),
                    s.def !== null ? 'default' : ''].filter(Boolean).join(',') || 'plain';
                ok(bad.length === 0, `${key}: {${s.name}} schema (${what})`, bad.join('; '));
            }
        }
    }
    const described = [];
    for (const [path, item] of Object.entries(doc.paths || {}))
        for (const m of Object.keys(item)) if (METHODS.includes(m)) described.push(`${m} ${path}`);
    const extra = described.filter((k) => !expected.has(k));
    ok(extra.length === 0 && described.length === expected.size,
       `describes exactly the ${expected.size} operations of ${routes} routes (${params} path parameters)`,
       `extra: ${extra.join(', ')}`);

    for (const template of websockets) {
        const path = pathOf(parseTemplate(template), parseTemplate(template).length);
        const op = resolved.paths && resolved.paths[path] && resolved.paths[path].get;
        if (!ok(op, `WebSocket ${template}: described as get ${path}`)) continue;
        ok(op['x-websocket'] === true, `WebSocket get ${path}: x-websocket: true`);
        const r = op.responses || {};
        ok(r['101'] && /WebSocket/.test(r['101'].description) && r['101'].headers &&
           r['101'].headers.Upgrade && r['101'].headers['Sec-WebSocket-Accept'],
           `WebSocket get ${path}: 101 Switching Protocols names the WebSocket protocol, with Upgrade and Sec-WebSocket-Accept`,
           JSON.stringify(r['101']));
        for (const code of ['400', '405', '426']) {
            const c = r[code] && r[code].content && r[code].content['application/problem+json'];
            ok(c && c.schema && c.schema.properties && c.schema.properties.status,
               `WebSocket get ${path}: ${code} is a problem details answer`, JSON.stringify(r[code]));
        }
        ok(r['426'] && r['426'].headers && r['426'].headers['Sec-WebSocket-Version'],
           `WebSocket get ${path}: 426 carries Sec-WebSocket-Version`);
    }
    const marked = described.filter((k) => { const [m, ...p] = k.split(' '); return doc.paths[p.join(' ')][m]['x-websocket']; });
    ok(marked.length === websockets.length, `x-websocket marks exactly the ${websockets.length} WebSocket routes`,
       marked.join(', '));

    const ids = described.map((k) => { const [m, ...p] = k.split(' '); return doc.paths[p.join(' ')][m].operationId; });
    ok(new Set(ids).size === ids.length && ids.every(Boolean), 'operationIds are unique');

    if (expectFile) {
        const expect = JSON.parse(fs.readFileSync(expectFile, 'utf8'));
        for (const e of expect) {
            const op = resolved.paths && resolved.paths[e.path] && resolved.paths[e.path][e.method];
            if (!ok(op, `${e.method} ${e.path}: declared (${e.what})`)) continue;
            const why = e.has ? subset(e.has, op) : null;
            ok(!why, `${e.method} ${e.path}: ${e.what}`, why);
            for (const p of e.params || []) {
                const got = (op.parameters || []).find((x) => x.name === p.name && x.in === p.in);
                const w = got ? subset(p, got) : 'missing';
                ok(!w, `${e.method} ${e.path}: ${p.in} parameter ${p.name}`, w);
            }
            if (e.responses) {
                const codes = Object.keys(op.responses || {}).sort();
                ok(JSON.stringify(codes) === JSON.stringify([...e.responses].sort()),
                   `${e.method} ${e.path}: responses ${e.responses.join(',')}`, codes.join(','));
            }
        }
    }
    process.exitCode = failures ? 1 : 0;
}

main().catch((e) => { console.log(`not ok - ${tag}: ${e.stack}`); process.exitCode = 1; });
