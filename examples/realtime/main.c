/* SPDX-License-Identifier: MIT */
/*
 * canal-realtime: WebSockets (ws.c) on canal.
 *
 *   build/bin/canal-realtime [--max-message BYTES] [canal's flags: --host, --port, --threads, ...]
 *
 * --max-message is the largest WebSocket message accepted (default 1048576); a larger one is
 * refused with close code 1009.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "realtime.h"

static const char usage[] = "usage: canal-realtime [--max-message BYTES] [options]\n";

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    size_t max_message = CANAL_WS_MAX_MESSAGE;
    canal_config_init(&cfg);
    cfg.allow_unknown_flags = 1; /* --max-message, below */
    if (canal_config_from_env(&cfg, &err) != 0 || canal_config_from_args(&cfg, &argc, argv, &err) != 0) {
        if (err.code == CANAL_EHELP) {
            printf("%s%s", usage, canal_config_usage());
            return 0;
        }
        fprintf(stderr, "canal-realtime: %s\n%s", err.message, canal_config_usage());
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        char *end;
        if (strcmp(argv[i], "--max-message") == 0 && i + 1 < argc &&
            (max_message = strtoull(argv[i + 1], &end, 10)) > 0 && *end == '\0' && argv[i + 1][0] != '-') {
            i++;
        } else {
            fprintf(stderr, "canal-realtime: bad argument %s\n%s%s", argv[i], usage, canal_config_usage());
            return 2;
        }
    }
    canal_app_t *app = canal_app_create(&cfg);
    if (app == NULL)
        return 1;
    realtime_ws_add(app, max_message);
    canal_app_metrics(app, "/metrics", NULL);
    if (canal_app_error(app, &err) != 0) {
        fprintf(stderr, "canal-realtime: %s\n", err.message);
        canal_app_destroy(app);
        return 1;
    }
    if (canal_app_start(app) != 0) {
        canal_app_destroy(app);
        return 1;
    }
    fprintf(stderr, "canal-realtime listening on http://%s:%u\n", canal_app_config(app)->host,
            canal_app_port(app, 0));
    int rc = canal_app_wait(app);
    canal_app_destroy(app);
    return rc == 0 ? 0 : 1;
}
