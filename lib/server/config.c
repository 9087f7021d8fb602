/* SPDX-License-Identifier: MIT */
/*
 * Configuration: defaults, then the environment (CANAL_*), then the command line, each
 * overriding the one before. Parsing is strict: a port must be a whole number in range,
 * an unknown --env value is an error rather than a silent default.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server_internal.h"

void canal_config_init(canal_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->host = "127.0.0.1";
    cfg->port = 8080;
    cfg->env = CANAL_ENV_PRODUCTION;
    cfg->max_body_size = 1024 * 1024;
    cfg->max_target_length = 8192;
    cfg->max_header_count = 64;
    cfg->max_header_bytes = 16384;
    cfg->max_query_params = 256;
    cfg->shutdown_timeout_ms = 10000;
    cfg->request_timeout_ms = 30000;
    cfg->offload_threads = 4;
    cfg->offload_queue = 1024;
    cfg->header_timeout_ms = 10000;
    cfg->body_timeout_ms = 10000;
    cfg->keepalive_timeout_ms = 60000;
    cfg->max_connections = 10000;
    cfg->max_json_depth = 64;
}

static int fail(canal_error_info_t *err, const char *what, const char *value)
{
    if (err != NULL) {
        err->code = CANAL_EINVAL;
        err->position = 0;
        snprintf(err->message, sizeof(err->message), "%s: bad value '%s'", what,
                 value ? value : "(missing)");
    }
    return CANAL_EINVAL;
}

static int number(const char *s, uint64_t max, uint64_t *out)
{
    int64_t v;
    if (s == NULL || canal_parse_int64((canal_str_t){s, strlen(s)}, &v) != 0 || v < 0 ||
        (uint64_t)v > max)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

/* Sets one option by its name (as on the command line, without "--"). */
static int set_option(canal_config_t *cfg, const char *name, const char *value,
                      canal_error_info_t *err)
{
    uint64_t n;
    if (strcmp(name, "host") == 0) {
        if (value == NULL || *value == '\0')
            return fail(err, "--host", value);
        cfg->host = value;
    } else if (strcmp(name, "port") == 0) {
        if (number(value, 65535, &n) != 0)
            return fail(err, "--port", value);
        cfg->port = (uint16_t)n;
    } else if (strcmp(name, "threads") == 0) {
        if (number(value, 1024, &n) != 0)
            return fail(err, "--threads", value);
        cfg->threads = (unsigned)n;
    } else if (strcmp(name, "env") == 0) {
        if (value != NULL && strcmp(value, "development") == 0)
            cfg->env = CANAL_ENV_DEVELOPMENT;
        else if (value != NULL && strcmp(value, "production") == 0)
            cfg->env = CANAL_ENV_PRODUCTION;
        else
            return fail(err, "--env (development|production)", value);
    } else if (strcmp(name, "access-log") == 0) {
        if (value == NULL || *value == '\0')
            return fail(err, "--access-log", value);
        cfg->access_log = strcmp(value, "off") == 0 ? NULL : value;
    } else if (strcmp(name, "max-body") == 0) {
        if (number(value, SIZE_MAX / 2, &n) != 0)
            return fail(err, "--max-body", value);
        cfg->max_body_size = (size_t)n;
    } else if (strcmp(name, "max-target") == 0) {
        if (number(value, 1u << 20, &n) != 0 || n < 16)
            return fail(err, "--max-target (16 to 1048576)", value);
        cfg->max_target_length = (size_t)n;
    } else if (strcmp(name, "max-headers") == 0) {
        if (number(value, 100, &n) != 0 || n == 0) /* libh2o's parser stops at 100 itself */
            return fail(err, "--max-headers (1 to 100)", value);
        cfg->max_header_count = (size_t)n;
    } else if (strcmp(name, "max-header-bytes") == 0) {
        if (number(value, 1u << 20, &n) != 0 || n < 64)
            return fail(err, "--max-header-bytes (64 to 1048576)", value);
        cfg->max_header_bytes = (size_t)n;
    } else if (strcmp(name, "max-query-params") == 0) {
        if (number(value, 1u << 16, &n) != 0 || n == 0)
            return fail(err, "--max-query-params (1 to 65536)", value);
        cfg->max_query_params = (size_t)n;
    } else if (strcmp(name, "shutdown-timeout") == 0) {
        if (number(value, 3600 * 1000, &n) != 0)
            return fail(err, "--shutdown-timeout", value);
        cfg->shutdown_timeout_ms = (unsigned)n;
    } else if (strcmp(name, "tls-port") == 0) {
        if (number(value, 65535, &n) != 0)
            return fail(err, "--tls-port", value);
        cfg->tls_port = (uint16_t)n;
    } else if (strcmp(name, "cert") == 0) {
        if (value == NULL || *value == '\0')
            return fail(err, "--cert", value);
        cfg->tls_cert = value;
    } else if (strcmp(name, "key") == 0) {
        if (value == NULL || *value == '\0')
            return fail(err, "--key", value);
        cfg->tls_key = value;
    } else if (strcmp(name, "request-timeout") == 0) {
        if (number(value, 3600 * 1000, &n) != 0 || n == 0)
            return fail(err, "--request-timeout", value);
        cfg->request_timeout_ms = (unsigned)n;
    } else if (strcmp(name, "offload-threads") == 0) {
        if (number(value, 1024, &n) != 0)
            return fail(err, "--offload-threads", value);
        cfg->offload_threads = (unsigned)n;
    } else if (strcmp(name, "offload-queue") == 0) {
        if (number(value, 1u << 30, &n) != 0)
            return fail(err, "--offload-queue", value);
        cfg->offload_queue = (size_t)n;
    } else if (strcmp(name, "shutdown-delay") == 0) {
        if (number(value, 3600 * 1000, &n) != 0)
            return fail(err, "--shutdown-delay", value);
        cfg->shutdown_delay_ms = (unsigned)n;
    } else if (strcmp(name, "request-id") == 0) {
        if (value != NULL && strcmp(value, "on") == 0)
            cfg->request_id = 1;
        else if (value != NULL && strcmp(value, "off") == 0)
            cfg->request_id = 0;
        else
            return fail(err, "--request-id (on|off)", value);
    } else if (strcmp(name, "trusted-proxies") == 0) {
        size_t count;
        canal_error_info_t why;
        if (value == NULL || *value == '\0')
            return fail(err, "--trusted-proxies", value);
        if (strcmp(value, "off") == 0) {
            cfg->trusted_proxies = NULL;
        } else if (canal__proxies_parse(value, NULL, &count, &why) != 0) {
            if (err != NULL)
                *err = why;
            return CANAL_EINVAL;
        } else {
            cfg->trusted_proxies = value;
        }
    } else if (strcmp(name, "header-timeout") == 0) {
        if (number(value, 3600 * 1000, &n) != 0 || n == 0)
            return fail(err, "--header-timeout", value);
        cfg->header_timeout_ms = (unsigned)n;
    } else if (strcmp(name, "body-timeout") == 0) {
        if (number(value, 3600 * 1000, &n) != 0 || n == 0)
            return fail(err, "--body-timeout", value);
        cfg->body_timeout_ms = (unsigned)n;
    } else if (strcmp(name, "keepalive-timeout") == 0) {
        if (number(value, 3600 * 1000, &n) != 0 || n == 0)
            return fail(err, "--keepalive-timeout", value);
        cfg->keepalive_timeout_ms = (unsigned)n;
    } else if (strcmp(name, "max-connections") == 0) {
        if (number(value, 1u << 24, &n) != 0 || n == 0)
            return fail(err, "--max-connections", value);
        cfg->max_connections = (size_t)n;
    } else if (strcmp(name, "max-json-depth") == 0) {
        /* jansson refuses deeper than 2048 on its own: a larger value would be a lie */
        if (number(value, 2048, &n) != 0 || n == 0)
            return fail(err, "--max-json-depth", value);
        cfg->max_json_depth = (size_t)n;
    } else {
        return 1; /* not ours */
    }
    return 0;
}

int canal_config_from_env(canal_config_t *cfg, canal_error_info_t *err)
{
    static const struct {
        const char *var, *option;
    } vars[] = {{"CANAL_HOST", "host"},
                {"CANAL_PORT", "port"},
                {"CANAL_THREADS", "threads"},
                {"CANAL_ENV", "env"},
                {"CANAL_ACCESS_LOG", "access-log"},
                {"CANAL_SHUTDOWN_DELAY", "shutdown-delay"},
                {"CANAL_REQUEST_ID", "request-id"},
                {"CANAL_TRUSTED_PROXIES", "trusted-proxies"},
                {"CANAL_HEADER_TIMEOUT", "header-timeout"},
                {"CANAL_BODY_TIMEOUT", "body-timeout"},
                {"CANAL_KEEPALIVE_TIMEOUT", "keepalive-timeout"},
                {"CANAL_MAX_CONNECTIONS", "max-connections"},
                {"CANAL_MAX_JSON_DEPTH", "max-json-depth"},
                {"CANAL_MAX_BODY", "max-body"},
                {"CANAL_MAX_TARGET", "max-target"},
                {"CANAL_MAX_HEADERS", "max-headers"},
                {"CANAL_MAX_HEADER_BYTES", "max-header-bytes"},
                {"CANAL_MAX_QUERY_PARAMS", "max-query-params"}};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i].var);
        if (v != NULL && set_option(cfg, vars[i].option, v, err) != 0) {
            if (err != NULL)
                snprintf(err->message, sizeof(err->message), "%s: bad value '%s'", vars[i].var, v);
            return CANAL_EINVAL;
        }
    }
    return 0;
}

int canal_config_from_args(canal_config_t *cfg, int *argc, char **argv, canal_error_info_t *err)
{
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) {
            argv[out++] = argv[i];
            continue;
        }
        char name[32];
        const char *eq = strchr(a + 2, '='), *value;
        size_t nlen = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
        if (nlen >= sizeof(name)) {
            argv[out++] = argv[i];
            continue;
        }
        memcpy(name, a + 2, nlen);
        name[nlen] = '\0';
        /* "--host --port 80": the next flag is not a value */
        value = eq ? eq + 1 : (i + 1 < *argc && strncmp(argv[i + 1], "--", 2) != 0 ? argv[i + 1] : NULL);
        int rc = set_option(cfg, name, value, err);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            argv[out++] = argv[i]; /* the app's own flag */
            continue;
        }
        if (eq == NULL)
            i++; /* the value was the next argument */
    }
    *argc = out;
    argv[out] = NULL;
    return 0;
}

const char *canal_config_usage(void)
{
    return "  --host ADDR              listen address (default 127.0.0.1; env CANAL_HOST)\n"
           "  --port N                 listen port (default 8080; 0 = any free; env CANAL_PORT)\n"
           "  --threads N              worker threads (default: one per core; env CANAL_THREADS)\n"
           "  --env development|production   error pages with details, or without (default\n"
           "                           production; env CANAL_ENV)\n"
           "  --access-log PATH|-|off  Combined Log Format to a file, stdout or nowhere\n"
           "                           (env CANAL_ACCESS_LOG)\n"
           "  --max-body BYTES         largest request body (default 1048576; over it: 413)\n"
           "  --max-target BYTES       longest request target (default 8192; over it: 414)\n"
           "  --max-headers N          most header fields, 1-100 (default 64; over it: 431)\n"
           "  --max-header-bytes BYTES most bytes of header fields (default 16384; over: 431)\n"
           "  --max-query-params N     most query parameters (default 256; over it: 414)\n"
           "  --shutdown-timeout MS    graceful shutdown deadline (default 10000)\n"
           "  --tls-port N --cert FILE --key FILE   also serve TLS (HTTP/2, HTTP/1.1 by ALPN)\n"
           "  --request-timeout MS     deadline of a deferred answer; then 504 (default 30000)\n"
           "  --offload-threads N      threads for blocking work (default 4)\n"
           "  --offload-queue N        jobs waiting for them; more: 503 (default 1024)\n"
           "  --shutdown-delay MS      on SIGTERM, readiness says 503 but the app keeps serving\n"
           "                           this long before it closes its listeners (default 0;\n"
           "                           env CANAL_SHUTDOWN_DELAY)\n"
           "  --request-id on|off      X-Request-Id on answers, in the log and problem details\n"
           "                           (default off; env CANAL_REQUEST_ID)\n"
           "  --trusted-proxies LIST|off   addresses/CIDRs whose X-Forwarded-For, Forwarded and\n"
           "                           X-Request-Id are believed (env CANAL_TRUSTED_PROXIES)\n"
           "  --header-timeout MS      whole request head within; else 408 (default 10000)\n"
           "  --body-timeout MS        longest pause inside a body; else 408 (default 10000)\n"
           "  --keepalive-timeout MS   idle connections closed after (default 60000)\n"
           "  --max-connections N      open connections per worker (default 10000)\n"
           "  --max-json-depth N       deepest JSON body parsed; 1-2048 (default 64)\n"
           "  (the limits also from the environment: CANAL_MAX_BODY, CANAL_MAX_TARGET,\n"
           "   CANAL_MAX_HEADERS, CANAL_MAX_HEADER_BYTES, CANAL_MAX_QUERY_PARAMS,\n"
           "   CANAL_HEADER_TIMEOUT, CANAL_BODY_TIMEOUT, CANAL_KEEPALIVE_TIMEOUT,\n"
           "   CANAL_MAX_CONNECTIONS, CANAL_MAX_JSON_DEPTH)\n";
}
