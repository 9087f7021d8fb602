// SPDX-License-Identifier: MIT
// Every `pattern` in canal's OpenAPI documents must be valid ECMA-262 and mean what canal
// matches (issue 25; docs/routing.md, "Constraints").
//
//   node check-patterns.cjs CANAL_ROUTES DOC.json...
//   node check-patterns.cjs CANAL_ROUTES --corpus regex-corpus.txt
//
// For each document:
//  1. every "pattern" anywhere in it compiles as `new RegExp(pattern, "u")`, the way
//     JavaScript validators read OpenAPI (and no "pattern" holds a POSIX class such as
//     [[:space:]], which compiles in JavaScript but means something else there);
//  2. a string "example" or "default" beside a pattern, and each string of "examples", is
//     accepted by it;
//  3. for each route regex (an operation's x-canal-template holding {x:...:regex(R)...}), the
//     document's pattern for that parameter and canal's own router (CANAL_ROUTES, the
//     canal-routes tool, case-insensitive like an app's router) agree on a set of sample
//     values: every value canal accepts, JavaScript accepts, and the other way round; and
//     canal accepts at least one of them, so that the check says something.
// With --corpus, the same comparison (3) for each pattern of the file, with its own samples,
// under both case policies, the ECMA-262 form taken from `canal-routes --ecma`.
// Prints TAP-style "ok - " / "not ok - " lines; exits 1 on a failure.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');

const [tool, ...docs] = process.argv.slice(2);
let failures = 0;
function ok(cond, what, why) {
    if (cond) console.log(`ok - ${what}`);
    else {
        failures++;
        console.log(`not ok - ${what}${why ? ': ' + why : ''}`);
    }
    return cond;
}

const SAMPLES = ['a', 'b', 'ab', 'ba', 'aab', 'abc', 'ABC', 'Abc', 'abc1', 'a1b2', 'x', 'xyz', 'Z9',
    '0', '7', '123', '2024', '1999', '12345', '-1', '1.5', 'x-y', 'hello-world', 'my-post-1', 'a_b',
    'a b', 'a.b', '..', '-', '_', '~', '+', '%', '@', 'csv', 'tsv', 'CSV', 'Tsv', 'json', 'k', 'K',
    's', 'S', '\u212a', '\u017f', '\u00e9', '\u00c9', '\u00fc', '\u65e5\u672c', 'abc\n', 'a\tb', ' ',
    '12/4/2013', '123-456-2334', 'abc@def.com', 'true', 'en-US', 'post', 'Post'];

// The regex arguments of a template's parameters: {name: [regex, ...]} (the argument runs to
// the first ')' followed by ':', '?', '=' or the end of the parameter; braces doubled).
function templateRegexes(t) {
    const out = {};
    for (let i = 0; i < t.length; i++) {
        if (t[i] !== '{' || t[i + 1] === '{') { if (t[i] === '{') i++; continue; }
        let j = i + 1, text = '';
        for (;;) {
            if ((t[j] === '}' || t[j] === '{') && t[j + 1] === t[j]) { text += t[j]; j += 2; }
            else if (t[j] === '}' || j >= t.length) break;
            else text += t[j++];
        }
        i = j;
        const name = text.replace(/^\*{1,2}/, '').split(/[:=?]/)[0];
        const res = [];
        for (let k = text.indexOf(':'); k >= 0 && k < text.length;) {
            const m = /^:([A-Za-z][A-Za-z0-9]*)/.exec(text.slice(k));
            if (!m) break;
            let e = k + m[0].length;
            if (text[e] === '(') {
                let f = e + 1;
                while (f < text.length && !(text[f] === ')' && (f + 1 === text.length || ':?='.includes(text[f + 1])))) f++;
                if (m[1].toLowerCase() === 'regex') res.push(text.slice(e + 1, f));
                e = f + 1;
            }
            k = text[e] === ':' ? e : -1;
        }
        if (res.length) out[name] = res;
    }
    return out;
}

// canal's answer for each sample (samples[k] for regexes[k]), and the ECMA-262 form it gives
// each regex: one canal-routes run each, a route per regex.
function canal(regexes, samples, caseOpt) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'canal-patterns-'));
    const file = path.join(dir, 'routes');
    const routes = regexes.map((r, k) => `GET /r${k}/{x:regex(${r.replace(/[{}]/g, '$&$&')})}`);
    fs.writeFileSync(file, routes.join('\n') + '\n');
    const enc = (s) => Array.from(Buffer.from(s, 'utf8')).map((b) => '%' + b.toString(16).padStart(2, '0')).join('');
    const reqs = [];
    regexes.forEach((r, k) => samples[k].forEach((s) => reqs.push(`GET /r${k}/${enc(s)}`)));
    try {
        const out = execFileSync(tool, [caseOpt, file], { input: reqs.join('\n') + '\n', encoding: 'utf8' })
            .split('\n');
        const ecma = execFileSync(tool, ['--ecma', caseOpt, file], { encoding: 'utf8' })
            .split('\n').filter(Boolean).map((l) => l.split('\t')[2]);
        let at = 0;
        return { accepts: regexes.map((r, k) => samples[k].map(() => out[at++].startsWith('200'))), ecma };
    } finally {
        fs.rmSync(dir, { recursive: true });
    }
}

// One regex: JavaScript and canal agree on every sample, and canal takes at least one.
function agree(what, r, ecma, samples, accepts) {
    let re;
    try { re = new RegExp(ecma, 'u'); } catch (e) { return ok(false, what, e.message); }
    const differ = samples.filter((s, n) => accepts[n] !== re.test(s))
        .map((s) => `${JSON.stringify(s)} canal ${accepts[samples.indexOf(s)] ? 'accepts' : 'refuses'}`);
    const taken = accepts.filter(Boolean).length;
    return ok(differ.length === 0 && taken > 0,
              `${what}: regex(${r}) and ${ecma} agree on ${samples.length} values (canal takes ${taken})`,
              differ.length ? differ.join(', ') : 'canal takes none of the samples');
}

if (docs[0] === '--corpus') {
    const lines = fs.readFileSync(docs[1], 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
    const regexes = lines.map((l) => l.split('\t')[0]);
    const samples = lines.map((l) => [...SAMPLES, ...l.split('\t').slice(1).map((x) => JSON.parse(`"${x}"`))]
        .filter((s) => s !== '' && !s.includes('\0')));
    for (const caseOpt of ['--case-insensitive', '--case-sensitive']) {
        const { accepts, ecma } = canal(regexes, samples, caseOpt);
        ok(ecma.length === regexes.length, `corpus ${caseOpt}: canal-routes --ecma gives a form per regex`);
        regexes.forEach((r, k) => agree(`corpus ${caseOpt}`, r, ecma[k], samples[k], accepts[k]));
    }
    process.exit(failures ? 1 : 0);
}

for (const file of docs) {
    const tag = path.basename(file);
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    // 1 and 2: every pattern, wherever it is
    let npatterns = 0;
    const bad = [];
    (function walk(v, where) {
        if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${where}/${i}`));
        if (v === null || typeof v !== 'object') return;
        if (typeof v.pattern === 'string') {
            npatterns++;
            let re = null;
            try { re = new RegExp(v.pattern, 'u'); } catch (e) { bad.push(`${where}: ${e.message}`); }
            if (/\[\[?:\^?[a-z]+:\]/.test(v.pattern)) bad.push(`${where}: a POSIX class in ${v.pattern}`);
            const examples = [v.example, v.default, ...(Array.isArray(v.examples) ? v.examples : [])]
                .filter((x) => typeof x === 'string');
            for (const x of examples)
                if (re && !re.test(x)) bad.push(`${where}: example ${JSON.stringify(x)} fails ${v.pattern}`);
        }
        for (const [k, x] of Object.entries(v)) walk(x, `${where}/${k}`);
    })(doc, '#');
    ok(bad.length === 0, `${tag}: its ${npatterns} patterns compile as RegExp(p, "u"), examples pass`,
       bad.join('; '));

    // 3: route regexes against canal's router
    const pairs = []; // [where, pcre, ecma]
    for (const [p, item] of Object.entries(doc.paths || {})) {
        for (const op of Object.values(item)) {
            if (!op || typeof op !== 'object' || typeof op['x-canal-template'] !== 'string') continue;
            const regexes = templateRegexes(op['x-canal-template']);
            for (const prm of op.parameters || []) {
                const list = regexes[prm.name];
                if (!list || prm.in !== 'path') continue;
                const s = prm.schema || {};
                const have = [s.pattern, ...(s.allOf || []).map((x) => x.pattern)]
                    .filter((x) => typeof x === 'string' && x !== '^[A-Za-z]+$');
                if (!ok(have.length === list.length, `${tag}: ${p} {${prm.name}}: a pattern per regex`,
                        `${have.length} patterns for ${list.length} regexes`)) continue;
                list.forEach((r, k) => pairs.push([`${p} {${prm.name}}`, r, have[k]]));
            }
        }
    }
    if (pairs.length === 0) {
        ok(true, `${tag}: no route regex in it to compare with canal`);
        continue;
    }
    const { accepts } = canal(pairs.map(([, r]) => r), pairs.map(() => SAMPLES), '--case-insensitive');
    pairs.forEach(([where, r, ecma], k) => agree(`${tag}: ${where}`, r, ecma, SAMPLES, accepts[k]));
}
process.exit(failures ? 1 : 0);
