/* SPDX-License-Identifier: MIT */
/*
 * canal-realtime: server-sent events (sse.c), WebSockets (ws.c) and a page at / that uses both
 * from a browser.
 *
 *   build/bin/canal-realtime --host 127.0.0.1 --port 8080 [--threads N] [--max-message BYTES]
 *
 * Every flag of canal (--help lists them) works too; --max-message, the example's own, is the
 * largest WebSocket message accepted (default 1048576; a larger one is closed with 1009). With
 * canal's --store redis://HOST:PORT[/DB], the chat rooms (ws.c) are shared by every instance
 * started with the same store.
 */
#include <stdio.h>
#include <string.h>
#include "realtime.h"

/* The page: an EventSource on /sse/ticks and a WebSocket to /ws/echo that sends the input's
 * text once it opens (and again at every click). Each side also writes its state into the DOM
 * (data-ticks, data-state, data-echo), which test/browser/realtime.cjs reads. */
static const char page[] =
    "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>canal realtime</title>\n"
    "<link rel=\"icon\" href=\"data:,\">\n"
    "<style>body{font-family:sans-serif;margin:2em}pre{background:#f4f4f4;padding:1em;height:12em;"
    "overflow:auto}</style></head>\n<body>\n<h1>canal realtime</h1>\n"
    "<h2>Server-sent events: /sse/ticks</h2>\n<pre id=\"ticks\" data-ticks=\"0\" data-state=\"connecting\"></pre>\n"
    "<h2>WebSocket: /ws/echo</h2>\n<input id=\"msg\" value=\"hello\"> <button id=\"send\">send</button>\n"
    "<pre id=\"echo\" data-state=\"connecting\" data-echo=\"\"></pre>\n<script>\n"
    "const ticks = document.getElementById('ticks'), echo = document.getElementById('echo');\n"
    "const input = document.getElementById('msg');\n"
    "const es = new EventSource('/sse/ticks?count=20&interval_ms=500');\n"
    "es.onopen = () => { ticks.dataset.state = 'open'; };\n"
    "es.addEventListener('tick', e => {\n"
    "  ticks.textContent += 'tick ' + e.lastEventId + ' ' + e.data + '\\n';\n"
    "  ticks.dataset.ticks = String(Number(ticks.dataset.ticks) + 1);\n"
    "  ticks.dataset.last = JSON.parse(e.data).i;\n"
    "});\n"
    "/* the stream ends after its last tick: do not reconnect */\n"
    "es.onerror = () => { ticks.textContent += '(stream ended)\\n'; ticks.dataset.state = 'ended'; es.close(); };\n"
    "let ws;\n"
    "function send() { if (ws && ws.readyState === 1) ws.send(input.value); }\n"
    "try {\n"
    "  ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/ws/echo');\n"
    "  ws.onopen = () => { echo.dataset.state = 'open'; send(); };\n"
    "  ws.onmessage = e => { echo.textContent += 'echo: ' + e.data + '\\n'; echo.dataset.echo = e.data; };\n"
    "  ws.onclose = e => { echo.textContent += '(closed ' + e.code + ')\\n'; echo.dataset.state = 'closed'; };\n"
    "} catch (err) { echo.textContent = String(err); echo.dataset.state = 'error'; }\n"
    "document.getElementById('send').onclick = send;\n"
    "</script>\n</body></html>\n";

static int index_page(canal_req_t *req, void *data)
{
    return canal_res_body_static(req, 200, "text/html; charset=utf-8", page, sizeof(page) - 1);
}

static size_t max_message;

/* the example's own option, beside canal's: --max-message, CANAL_MAX_MESSAGE, "max-message" */
static const canal_option_t options[] = {
    {"max-message", CANAL_OPTION_NUMBER, &max_message, "1048576", .min = 1, .meta = "BYTES",
     .help = "largest WebSocket message; over it: close 1009"},
};

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    canal_config_options(&cfg, options, 1, &err);
    int rc = canal_config_load(&cfg, &argc, argv, &err); /* --config FILE, CANAL_*, flags */
    if (rc != 0 || argc > 1) {
        FILE *f = rc == CANAL_EHELP ? stdout : stderr;
        fprintf(f, "%s\n", rc != 0 ? err.message : "canal-realtime: no arguments but flags");
        canal_config_help(&cfg, 0, f);
        return rc == CANAL_EHELP ? 0 : 2;
    }
    canal_app_t *app = canal_app_create(&cfg);
    if (app == NULL)
        return 1;
    canal_app_get(app, "", index_page, NULL);
    realtime_sse_add(app);
    realtime_ws_add(app, max_message);
    canal_app_metrics(app, "/metrics", NULL);
    if (canal_app_error(app, &err) != 0) { /* the first registration error, if any */
        fprintf(stderr, "canal-realtime: %s\n", err.message);
        canal_app_destroy(app);
        return 1;
    }
    if (canal_app_start(app) != 0) {
        canal_app_destroy(app);
        return 1;
    }
    printf("listening on http://%s:%u (WebSocket messages up to %zu bytes)\n", canal_app_config(app)->host,
           canal_app_port(app, 0), max_message);
    fflush(stdout);
    rc = canal_app_wait(app); /* until SIGINT or SIGTERM, then a graceful shutdown */
    canal_app_destroy(app);
    return rc == 0 ? 0 : 1;
}
