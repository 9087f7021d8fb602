// SPDX-License-Identifier: MIT
// The demo's two documents, router mode's and controller mode's, are the same but for what
// only controller mode knows or what names the mode:
//   - operationId: router mode makes it from the method and path ("get_home_json"),
//     controller mode names the action ("Home_Json");
//   - tags: controller mode tags each action's operation with its controller (["Home"]),
//     router mode has none;
// (routes that are no action, /health/* and /metrics, are the same in both).
//   - info.description names the mode.
// The test asserts exactly that: those differ as said, and nothing else does.
//
//   node compare-modes.cjs ROUTER.json CONTROLLER.json
'use strict';
const fs = require('fs');
const assert = require('assert');
const [router, controller] = process.argv.slice(2).map((f) => JSON.parse(fs.readFileSync(f, 'utf8')));
let failures = 0;
function ok(cond, what, why) {
    if (cond) console.log(`ok - modes: ${what}`);
    else {
        failures++;
        console.log(`not ok - modes: ${what}${why ? ': ' + why : ''}`);
    }
    return cond;
}

function operations(doc) {
    const out = [];
    for (const [p, item] of Object.entries(doc.paths))
        for (const [m, op] of Object.entries(item)) out.push([`${m} ${p}`, op]);
    return out;
}

const rops = operations(router), cops = Object.fromEntries(operations(controller));
for (const [key, op] of rops) {
    const [m, p] = key.split(' ');
    ok(op.operationId === m + p.replace(/[^A-Za-z0-9]+/g, '_').replace(/_+$/, ''),
       `router ${key}: operationId from the method and path`, op.operationId);
    ok(op.tags === undefined, `router ${key}: no tags`);
    const c = cops[key];
    if (!ok(c !== undefined, `controller mode has ${key}`)) continue;
    // the demo's actions are under /home and /api; /health and /metrics are plain routes there too
    if (/^\/(home|api)\//.test(p))
        ok(Array.isArray(c.tags) && c.tags.length === 1 && new RegExp(`^${c.tags[0]}_[A-Za-z]+$`).test(c.operationId),
           `controller ${key}: tagged with its controller, operationId Controller_Action`,
           JSON.stringify([c.tags, c.operationId]));
    else
        ok(c.tags === undefined && c.operationId === op.operationId, `controller ${key}: a plain route, as in router mode`);
}
ok(/router mode/.test(router.info.description) && /controller mode/.test(controller.info.description),
   'info.description names the mode');
function strip(doc) {
    const d = JSON.parse(JSON.stringify(doc));
    delete d.info.description;
    for (const [, op] of operations(d)) {
        delete op.operationId;
        delete op.tags;
    }
    return d;
}
try {
    assert.deepStrictEqual(strip(controller), strip(router));
    ok(true, 'the documents are otherwise the same');
} catch (e) {
    ok(false, 'the documents are otherwise the same', e.message.split('\n').slice(0, 30).join('\n'));
}
process.exit(failures ? 1 : 0);
