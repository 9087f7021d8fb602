/* SPDX-License-Identifier: MIT */
/*
 * Configuration: defaults, then the environment (CANAL_*), then the command line, each
 * overriding the one before. All of it comes from one table, options[]: one row per setting
 * with its flag, its type, its field in canal_config_t, its default, its range and its help.
 * canal_config_init(), canal_config_from_env(), canal_config_from_args(),
 * canal_config_usage() and the table of docs/server.md (canal__config_markdown(), checked by
 * test/unit/config_test.c) all walk it, so a setting added there is everywhere at once.
 *
 * The environment variable of a flag is its name in capitals after CANAL_, '-' written '_'
 * (--max-body: CANAL_MAX_BODY). Parsing is strict: a number must be whole and in range, an
 * unknown --env value is an error rather than a silent default, and so is an unknown --flag.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/core.h"
#include <stdarg.h>
#include <jansson.h>
#include "core/config_internal.h"

#define FIELD(f) .offset = offsetof(canal_config_t, f), .size = sizeof(((canal_config_t *)0)->f)
#define HOUR_MS (3600u * 1000)

static const struct canal__option options[] = {
    {"host", CANAL__OPT_STR, FIELD(host), "ADDR", .def_str = "127.0.0.1",
     .help = "listen address (0.0.0.0, ::, a name)"},
    {"port", CANAL__OPT_U16, FIELD(port), "N", .def = 8080, .max = 65535, .help = "listen port; 0: any free port"},
    {"threads", CANAL__OPT_UINT, FIELD(threads), "N", .max = 1024, .help = "worker threads; 0: one per online core"},
    {"env", CANAL__OPT_CHOICE, FIELD(env), "development|production", .choices = {"production", "development"},
     .help = "development: error pages with the details"},
    {"access-log", CANAL__OPT_STR_OFF, FIELD(access_log), "PATH|-|off",
     .help = "access log to a file, stdout (-) or nowhere"},
    {"access-log-format", CANAL__OPT_CHOICE, FIELD(access_log_format), "clf|json", .choices = {"clf", "json"},
     .help = "access log lines: Combined Log Format or JSON"},
    {"max-body", CANAL__OPT_SIZE, FIELD(max_body_size), "BYTES", .def = 1024 * 1024, .max = SIZE_MAX / 2,
     .help = "largest request body; over it 413"},
    {"max-target", CANAL__OPT_SIZE, FIELD(max_target_length), "BYTES", .def = 8192, .min = 16, .max = 1u << 20,
     .help = "longest request target (path and query); over it 414"},
    /* libh2o's parser stops at 100 header fields itself */
    {"max-headers", CANAL__OPT_SIZE, FIELD(max_header_count), "N", .def = 64, .min = 1, .max = 100,
     .help = "most request header fields; over it 431"},
    {"max-header-bytes", CANAL__OPT_SIZE, FIELD(max_header_bytes), "BYTES", .def = 16384, .min = 64, .max = 1u << 20,
     .help = "most bytes of header names and values; over it 431"},
    {"max-query-params", CANAL__OPT_SIZE, FIELD(max_query_params), "N", .def = 256, .min = 1, .max = 1u << 16,
     .help = "most query parameters; over it 414"},
    {"shutdown-timeout", CANAL__OPT_UINT, FIELD(shutdown_timeout_ms), "MS", .def = 10000, .max = HOUR_MS,
     .help = "graceful shutdown deadline for requests in flight"},
    {"shutdown-delay", CANAL__OPT_UINT, FIELD(shutdown_delay_ms), "MS", .max = HOUR_MS,
     .help = "on a stop, serve this long with readiness 503 first"},
    {"request-timeout", CANAL__OPT_UINT, FIELD(request_timeout_ms), "MS", .def = 30000, .min = 1, .max = HOUR_MS,
     .help = "a deferred answer not given by then is a 504"},
    {"stream-timeout", CANAL__OPT_UINT, FIELD(stream_timeout_ms), "MS", .def = 60000, .min = 1, .max = HOUR_MS,
     .help = "a stream with no progress this long is cut"},
    {"offload-threads", CANAL__OPT_UINT, FIELD(offload_threads), "N", .def = 4, .max = 1024,
     .help = "threads for blocking work; 0: no offload pool"},
    {"offload-queue", CANAL__OPT_SIZE, FIELD(offload_queue), "N", .def = 1024, .max = 1u << 30,
     .help = "offload jobs that may wait; more is a 503"},
    {"tls-port", CANAL__OPT_U16, FIELD(tls_port), "N", .max = 65535,
     .help = "also serve TLS there (HTTP/2, HTTP/1.1); 0: none"},
    {"cert", CANAL__OPT_STR, FIELD(tls_cert), "FILE", .help = "PEM certificate chain for --tls-port"},
    {"key", CANAL__OPT_STR, FIELD(tls_key), "FILE", .help = "PEM private key for --tls-port"},
    {"request-id", CANAL__OPT_CHOICE, FIELD(request_id), "on|off", .choices = {"off", "on"},
     .help = "X-Request-Id on answers, in the log and problems"},
    {"trusted-proxies", CANAL__OPT_PROXIES, FIELD(trusted_proxies), "LIST|off",
     .help = "addresses, CIDRs whose X-Forwarded-For is believed"},
    {"header-timeout", CANAL__OPT_UINT, FIELD(header_timeout_ms), "MS", .def = 10000, .min = 1, .max = HOUR_MS,
     .help = "whole request head within this; else 408"},
    {"body-timeout", CANAL__OPT_UINT, FIELD(body_timeout_ms), "MS", .def = 10000, .min = 1, .max = HOUR_MS,
     .help = "longest pause inside a body; else 408"},
    {"keepalive-timeout", CANAL__OPT_UINT, FIELD(keepalive_timeout_ms), "MS", .def = 60000, .min = 1, .max = HOUR_MS,
     .help = "an idle connection is closed after this"},
    {"max-connections", CANAL__OPT_SIZE, FIELD(max_connections), "N", .def = 10000, .min = 1, .max = 1u << 24,
     .help = "open connections per worker"},
    /* jansson refuses deeper than 2048 on its own: a larger value would be a lie */
    {"max-json-depth", CANAL__OPT_SIZE, FIELD(max_json_depth), "N", .def = 64, .min = 1, .max = 2048,
     .help = "deepest JSON body canal_req_json() parses"},
    {"ws-idle-timeout", CANAL__OPT_UINT, FIELD(ws_idle_timeout_ms), "MS", .def = 60000, .min = 1, .max = HOUR_MS,
     .help = "a silent WebSocket is pinged, then closed"},
    {"ws-max-queued", CANAL__OPT_SIZE, FIELD(ws_max_queued), "BYTES", .def = 16u << 20, .min = 1024,
     .max = SIZE_MAX / 2, .help = "unsent bytes per WebSocket; past them: dropped"},
    {"listen", CANAL__OPT_LISTEN, FIELD(listen), "unix:PATH|off",
     .help = "a unix socket instead of --host and --port"},
    {"unix-mode", CANAL__OPT_MODE, FIELD(unix_mode), "OCTAL", .def = 0660, .max = 0777,
     .help = "file mode of the unix socket"},
    {"unix-owner", CANAL__OPT_STR_OFF, FIELD(unix_owner), "USER[:GROUP]|:GROUP|off",
     .help = "owner and group of the unix socket"},
    {"reuse-port", CANAL__OPT_CHOICE, FIELD(reuse_port), "on|off", .choices = {"off", "on"},
     .help = "share the port with a running process (restart)"},
    {"log-format", CANAL__OPT_CHOICE, FIELD(log_format), "text|json", .choices = {"text", "json"},
     .help = "the log's lines on stderr: text or JSON"},
    {"log-level", CANAL__OPT_CHOICE, FIELD(log_level), "error|warn|info", .choices = {"error", "warn", "info"},
     .def = CANAL_LOG_INFO, .help = "the least a message must matter to be logged"},
    {"trace", CANAL__OPT_CHOICE, FIELD(trace), "on|off", .choices = {"off", "on"},
     .help = "W3C trace context: in the logs and problems"},
    {"trace-echo", CANAL__OPT_CHOICE, FIELD(trace_echo), "on|off", .choices = {"off", "on"},
     .help = "traceparent on answers (turns --trace on)"},
    {"store", CANAL__OPT_STR_OFF, FIELD(store), "redis://HOST:PORT[/DB]",
     .help = "sessions and rate limits in a shared Redis"},
    {"config", CANAL__OPT_STR_OFF, FIELD(config_file), "FILE",
     .help = "JSON file of settings, keys as these flags"},
};

static const size_t noptions = sizeof(options) / sizeof(options[0]);

const struct canal__option *canal__config_options(size_t *n)
{
    *n = noptions;
    return options;
}

/* An app's option as a row of the table; its default from its text, by canal__config_options(). */
static void app_row(const canal_option_t *a, struct canal__option *o)
{
    *o = (struct canal__option){.flag = a->name, .help = a->help, .ptr = a->value, .meta = a->meta};
    switch (a->type) {
    case CANAL_OPTION_NUMBER:
        o->kind = CANAL__OPT_SIZE;
        o->min = a->min;
        o->max = a->max != 0 ? a->max : SIZE_MAX / 2;
        o->def = a->min;
        if (a->def != NULL) {
            int64_t v;
            if (canal_parse_int64((canal_str_t){a->def, strlen(a->def)}, &v) == 0 && v >= 0)
                o->def = (uint64_t)v;
        }
        o->meta = a->meta != NULL ? a->meta : "N";
        break;
    case CANAL_OPTION_SWITCH:
        o->kind = CANAL__OPT_CHOICE;
        o->choices[0] = "off";
        o->choices[1] = "on";
        o->def = a->def != NULL && strcmp(a->def, "on") == 0;
        o->meta = a->meta != NULL ? a->meta : "on|off";
        break;
    default:
        o->kind = CANAL__OPT_STR_OFF;
        o->def_str = a->def != NULL && strcmp(a->def, "off") != 0 ? a->def : NULL;
        o->meta = a->meta != NULL ? a->meta : "TEXT";
    }
}

int canal__config_row(const canal_config_t *cfg, size_t i, struct canal__option *o)
{
    if (i < noptions) {
        *o = options[i];
        return 0;
    }
    if (cfg == NULL || cfg->options == NULL || i - noptions >= cfg->noptions)
        return -1;
    app_row(&cfg->options[i - noptions], o);
    return 0;
}

#define ROWS(cfg, o) \
    for (size_t row_ = 0; canal__config_row((cfg), row_, (o)) == 0; row_++)

static int is_string(const struct canal__option *o)
{
    return o->kind == CANAL__OPT_STR || o->kind == CANAL__OPT_STR_OFF || o->kind == CANAL__OPT_PROXIES ||
           o->kind == CANAL__OPT_LISTEN;
}

/* Writes a number (a choice: its index) or, for the string kinds, s into o's field. */
static void store(canal_config_t *cfg, const struct canal__option *o, uint64_t n, const char *s)
{
    void *field = o->ptr != NULL ? o->ptr : (char *)cfg + o->offset;
    switch (o->kind) {
    case CANAL__OPT_U16: *(uint16_t *)field = (uint16_t)n; break;
    case CANAL__OPT_UINT:
    case CANAL__OPT_MODE: *(unsigned *)field = (unsigned)n; break;
    case CANAL__OPT_SIZE: *(size_t *)field = (size_t)n; break;
    case CANAL__OPT_CHOICE: *(int *)field = (int)n; break;
    default: *(const char **)field = s;
    }
}

void canal_config_init(canal_config_t *cfg)
{
    *cfg = (canal_config_t){0};
    for (size_t i = 0; i < noptions; i++)
        store(cfg, &options[i], options[i].def, options[i].def_str);
}

/* CANAL_MAX_BODY for "max-body", into buf (as large as the longest name needs). */
const char *canal__config_env_name(const struct canal__option *o, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "CANAL_%s", o->flag);
    for (size_t i = 6; i < n && i < size; i++)
        buf[i] = buf[i] == '-' ? '_' : (char)toupper((unsigned char)buf[i]);
    return buf;
}

/* "0 to 65535", "1 or more", "development or production": the values an option takes. */
static void describe_range(const struct canal__option *o, char *buf, size_t size)
{
    switch (o->kind) {
    case CANAL__OPT_STR: snprintf(buf, size, "not empty"); break;
    case CANAL__OPT_STR_OFF: snprintf(buf, size, "not empty; off: none"); break;
    case CANAL__OPT_PROXIES: snprintf(buf, size, "addresses, CIDRs, unix, by commas or spaces; off: none"); break;
    case CANAL__OPT_LISTEN: snprintf(buf, size, "unix: and a path of 1 to 107 bytes; off: none"); break;
    case CANAL__OPT_MODE: snprintf(buf, size, "octal, 0 to %llo", (unsigned long long)o->max); break;
    case CANAL__OPT_CHOICE:
        if (o->choices[2] != NULL)
            snprintf(buf, size, "%s, %s or %s", o->choices[0], o->choices[1], o->choices[2]);
        else
            snprintf(buf, size, "%s or %s", o->choices[0], o->choices[1]);
        break;
    default:
        if (o->max >= UINT32_MAX)
            snprintf(buf, size, "%llu or more", (unsigned long long)o->min);
        else
            snprintf(buf, size, "%llu to %llu", (unsigned long long)o->min, (unsigned long long)o->max);
    }
}

static void describe_default(const struct canal__option *o, char *buf, size_t size)
{
    if (o->kind == CANAL__OPT_CHOICE)
        snprintf(buf, size, "%s", o->choices[o->def]);
    else if (is_string(o))
        snprintf(buf, size, "%s", o->def_str ? o->def_str : o->kind == CANAL__OPT_STR ? "none" : "off");
    else if (o->kind == CANAL__OPT_MODE)
        snprintf(buf, size, "0%llo", (unsigned long long)o->def);
    else
        snprintf(buf, size, "%llu", (unsigned long long)o->def);
}

/* "--port: bad value '99999' (0 to 65535)"; who is the flag or the variable. */
static int bad_value(canal_error_info_t *err, const struct canal__option *o, const char *who, const char *value)
{
    if (err != NULL) {
        char range[64];
        describe_range(o, range, sizeof(range));
        *err = (canal_error_info_t){.code = CANAL_EINVAL};
        snprintf(err->message, sizeof(err->message), "%s: bad value '%s' (%s)", who,
                 value ? value : "(missing)", range);
    }
    return CANAL_EINVAL;
}

/* Sets one option from its text. Returns 0 or CANAL_EINVAL (err names who). */
static int set_option(canal_config_t *cfg, const struct canal__option *o, const char *who,
                      const char *value, canal_error_info_t *err)
{
    int64_t v = 0;
    if (value == NULL || *value == '\0')
        return bad_value(err, o, who, value);
    if (is_string(o)) {
        canal_error_info_t why;
        size_t count;
        int off = o->kind != CANAL__OPT_STR && strcmp(value, "off") == 0;
        if (o->kind == CANAL__OPT_PROXIES && !off && canal__proxies_parse(value, NULL, &count, &why) != 0) {
            if (err != NULL) {
                *err = why;
                err->code = CANAL_EINVAL;
                snprintf(err->message, sizeof(err->message), "%s: %.120s", who, why.message);
            }
            return CANAL_EINVAL;
        }
        /* sockaddr_un's sun_path holds 107 bytes and the NUL */
        if (o->kind == CANAL__OPT_LISTEN && !off && (strncmp(value, "unix:", 5) != 0 || value[5] == '\0' ||
                                                     strlen(value + 5) > 107))
            return bad_value(err, o, who, value);
        store(cfg, o, 0, off ? NULL : value);
        return 0;
    }
    if (o->kind == CANAL__OPT_MODE) {
        char *end;
        errno = 0;
        unsigned long m = strtoul(value, &end, 8);
        if (*end != '\0' || errno != 0 || value[0] < '0' || value[0] > '7' || m > o->max)
            return bad_value(err, o, who, value);
        v = (int64_t)m;
    } else if (o->kind == CANAL__OPT_CHOICE) {
        while (o->choices[v] != NULL && strcmp(value, o->choices[v]) != 0)
            v++;
        if (o->choices[v] == NULL)
            return bad_value(err, o, who, value);
    } else if (canal_parse_int64((canal_str_t){value, strlen(value)}, &v) != 0 || v < 0 ||
               (uint64_t)v < o->min || (uint64_t)v > o->max) {
        return bad_value(err, o, who, value);
    }
    store(cfg, o, (uint64_t)v, NULL);
    return 0;
}

int canal_config_from_env(canal_config_t *cfg, canal_error_info_t *err)
{
    struct canal__option o;
    ROWS(cfg, &o) {
        char name[80];
        const char *v = getenv(canal__config_env_name(&o, name, sizeof(name)));
        if (v != NULL && set_option(cfg, &o, name, v, err) != 0)
            return CANAL_EINVAL;
    }
    return 0;
}

/* The option of "--name" or "--name=value" (a points past the dashes, len its name's bytes)
 * in *o; 0, or -1 if none. */
static int find_option(const canal_config_t *cfg, const char *a, size_t len, struct canal__option *o)
{
    ROWS(cfg, o)
        if (strlen(o->flag) == len && memcmp(o->flag, a, len) == 0)
            return 0;
    return -1;
}

static int is_help(const char *a)
{
    return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0;
}

int canal_config_from_args(canal_config_t *cfg, int *argc, char **argv, canal_error_info_t *err)
{
    /* --help first, so that it leaves everything as it was */
    for (int i = 1; i < *argc && strcmp(argv[i], "--") != 0; i++) {
        if (is_help(argv[i])) {
            if (err != NULL) {
                *err = (canal_error_info_t){.code = CANAL_EHELP};
                snprintf(err->message, sizeof(err->message), "usage: %s [options]", argv[0]);
            }
            return CANAL_EHELP;
        }
    }
    int out = 1, i = 1;
    for (; i < *argc && strcmp(argv[i], "--") != 0; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0) {
            argv[out++] = argv[i];
            continue;
        }
        struct canal__option row, *o = &row;
        if (find_option(cfg, a + 2, strcspn(a + 2, "="), &row) != 0)
            o = NULL;
        if (o == NULL && cfg->allow_unknown_flags) {
            argv[out++] = argv[i]; /* the app's own flag */
            continue;
        }
        if (o == NULL) {
            if (err != NULL) {
                *err = (canal_error_info_t){.code = CANAL_EINVAL};
                snprintf(err->message, sizeof(err->message), "unknown flag %.*s; see --help",
                         (int)strcspn(a, "="), a);
            }
            return CANAL_EINVAL;
        }
        /* "--host --port 80": the next flag is not a value */
        const char *eq = strchr(a, '='), *value = eq ? eq + 1 : NULL;
        if (eq == NULL && i + 1 < *argc && strncmp(argv[i + 1], "--", 2) != 0)
            value = argv[++i];
        else if (eq == NULL && o->kind == CANAL__OPT_CHOICE && strcmp(o->choices[0], "off") == 0 &&
                 strcmp(o->choices[1], "on") == 0)
            value = "on"; /* "--trace" alone, last or before another flag: on */
        char who[80];
        snprintf(who, sizeof(who), "--%.70s", o->flag);
        if (set_option(cfg, o, who, value, err) != 0)
            return CANAL_EINVAL;
    }
    while (i < *argc) /* "--" and what follows it */
        argv[out++] = argv[i++];
    *argc = out;
    argv[out] = NULL;
    return 0;
}

/* A '|' in a markdown table cell ends it, even in `code`, unless written "\|". */
static void escape_bars(char *s, size_t size)
{
    for (char *p = strchr(s, '|'); p != NULL && strlen(s) + 2 <= size; p = strchr(p + 2, '|')) {
        memmove(p + 1, p, strlen(p) + 1);
        *p = '\\';
    }
}

/* The usage text, or the markdown table if markdown, of cfg's rows (canal's only if cfg is
 * NULL) to f; 0, or -1 when f fails. */
static int write_options(const canal_config_t *cfg, FILE *f, int markdown)
{
    if (markdown && fputs("| flag | environment | default | values | what |\n|---|---|---|---|---|\n", f) < 0)
        return -1;
    struct canal__option row, *o = &row;
    ROWS(cfg, o) {
        char flag[96], env[80], def[64], range[64];
        snprintf(flag, sizeof(flag), "--%s %s", o->flag, o->meta);
        canal__config_env_name(o, env, sizeof(env));
        describe_default(o, def, sizeof(def));
        describe_range(o, range, sizeof(range));
        int number = !is_string(o) && o->kind != CANAL__OPT_CHOICE; /* else meta says the range */
        if (markdown)
            escape_bars(flag, sizeof(flag));
        int rc = markdown ? fprintf(f, "| `%s` | `%s` | %s | %s | %s |\n", flag, env, def, range, o->help)
                          : fprintf(f, "  %-24s %s\n      %s; default %s%s%s%s\n", flag, o->help, env, def,
                                    number ? " (" : "", number ? range : "", number ? ")" : "");
        if (rc < 0)
            return -1;
    }
    return ferror(f) ? -1 : 0;
}

/* write_options() into buf (NUL-terminated); 0, or -1 when it does not fit */
static int write_options_buf(const canal_config_t *cfg, char *buf, size_t size, int markdown)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return -1;
    int rc = write_options(cfg, f, markdown);
    if (fclose(f) != 0 || rc != 0 || len >= size) {
        free(text);
        return -1;
    }
    memcpy(buf, text, len + 1);
    free(text);
    return 0;
}

int canal_config_help(const canal_config_t *cfg, int markdown, FILE *f)
{
    return write_options(cfg, f, markdown);
}

static char usage_text[8192];
static pthread_once_t usage_once = PTHREAD_ONCE_INIT;

static void make_usage(void)
{
    if (write_options_buf(NULL, usage_text, sizeof(usage_text), 0) != 0)
        abort(); /* the table outgrew the buffer: config_test says so first */
}

const char *canal_config_usage(void)
{
    pthread_once(&usage_once, make_usage);
    return usage_text;
}

int canal__config_markdown(char *buf, size_t size)
{
    return write_options_buf(NULL, buf, size, 1);
}

/* The app's options */

static int declaration_error(canal_error_info_t *err, size_t i, const char *name, const char *why)
{
    return canal_error_set(err, CANAL_EINVAL, 0, "app option %zu (%.40s): %s", i, name ? name : "NULL", why);
}

int canal_config_options(canal_config_t *cfg, const canal_option_t *opts, size_t n, canal_error_info_t *err)
{
    if (n > CANAL__MAX_APP_OPTIONS || (n > 0 && opts == NULL))
        return canal_error_set(err, CANAL_EINVAL, 0, "at most 64 app options");
    for (size_t i = 0; i < n; i++) {
        const canal_option_t *a = &opts[i];
        struct canal__option o;
        if (a->name == NULL || a->name[0] == '\0' || a->name[0] == '-' || strlen(a->name) > 48 ||
            a->name[strspn(a->name, "abcdefghijklmnopqrstuvwxyz0123456789-")] != '\0')
            return declaration_error(err, i, a->name, "a name is lower-case letters, digits and '-'");
        if (find_option(NULL, a->name, strlen(a->name), &o) == 0 || strcmp(a->name, "help") == 0)
            return declaration_error(err, i, a->name, "canal has a setting of that name");
        for (size_t k = 0; k < i; k++)
            if (strcmp(opts[k].name, a->name) == 0)
                return declaration_error(err, i, a->name, "declared twice");
        if (a->value == NULL || a->help == NULL || a->help[0] == '\0')
            return declaration_error(err, i, a->name, "no variable or no help");
        if (a->type != CANAL_OPTION_STRING && a->type != CANAL_OPTION_NUMBER && a->type != CANAL_OPTION_SWITCH)
            return declaration_error(err, i, a->name, "not a type");
        if (a->type == CANAL_OPTION_NUMBER && a->max != 0 && a->min > a->max)
            return declaration_error(err, i, a->name, "min is over max");
        /* the default must be a value of the option: checked on a scratch variable */
        union { const char *s; size_t n; int b; } scratch;
        canal_option_t copy = *a;
        copy.value = &scratch;
        app_row(&copy, &o);
        if (a->def != NULL && set_option(NULL, &o, a->name, a->def, NULL) != 0)
            return declaration_error(err, i, a->name, "its default is not a value of its type");
    }
    for (size_t i = 0; i < n; i++) {
        struct canal__option o;
        app_row(&opts[i], &o);
        store(NULL, &o, o.def, o.def_str);
    }
    cfg->options = opts;
    cfg->noptions = n;
    return 0;
}

/* The configuration file */

/* "app.json: max-body: " and the rest */
static int file_error(canal_error_info_t *err, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int file_error(canal_error_info_t *err, const char *path, const char *fmt, ...)
{
    if (err != NULL) {
        *err = (canal_error_info_t){.code = CANAL_EINVAL};
        int n = snprintf(err->message, sizeof(err->message), "%.100s: ", path);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message + n, sizeof(err->message) - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return CANAL_EINVAL;
}

int canal__config_file(canal_config_t *cfg, const char *path, void **doc, canal_error_info_t *err)
{
    *doc = NULL;
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return jerr.line > 0 ? file_error(err, path, "line %d, column %d: %.120s", jerr.line, jerr.column, jerr.text)
                             : file_error(err, path, "%.120s", jerr.text);
    if (!json_is_object(root)) {
        json_decref(root);
        return file_error(err, path, "not a JSON object");
    }
    const char *key;
    json_t *v;
    int rc = 0;
    json_object_foreach(root, key, v) {
        struct canal__option o;
        char who[160];
        snprintf(who, sizeof(who), "%.100s: %.50s", path, key);
        if (find_option(cfg, key, strlen(key), &o) != 0 || strcmp(key, "config") == 0) {
            rc = file_error(err, path, "unknown key '%.60s'%s", key,
                            strcmp(key, "config") == 0 ? " (a file names no other)" : "");
            break;
        }
        int number = !is_string(&o) && o.kind != CANAL__OPT_CHOICE && o.kind != CANAL__OPT_MODE;
        char text[32];
        const char *value;
        if (number && json_is_integer(v)) {
            snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(v));
            value = text;
        } else if (!number && json_is_string(v)) {
            value = json_string_value(v);
        } else {
            rc = file_error(err, path, "%.50s: wrong type (%s expected)", key, number ? "a whole number" : "a string");
            break;
        }
        if ((rc = set_option(cfg, &o, who, value, err)) != 0)
            break;
    }
    if (rc != 0) { /* the messages are written: key and value were in root */
        json_decref(root);
        return CANAL_EINVAL;
    }
    *doc = root;
    return 0;
}

/* What canal_config_from_file() and canal_config_load() keep for the process's life: the
 * documents cfg's strings point into, and the command lines; reachable, so not a leak. */
static struct kept {
    struct kept *next;
    void *doc;
    struct canal__loaded loaded;
} *kept_list;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static struct kept *keep(void)
{
    struct kept *k = calloc(1, sizeof(*k));
    if (k != NULL) {
        pthread_mutex_lock(&kept_lock);
        k->next = kept_list;
        kept_list = k;
        pthread_mutex_unlock(&kept_lock);
    }
    return k;
}

int canal_config_from_file(canal_config_t *cfg, const char *path, canal_error_info_t *err)
{
    void *doc;
    int rc = canal__config_file(cfg, path, &doc, err);
    if (rc != 0)
        return rc;
    struct kept *k = keep();
    if (k == NULL) {
        json_decref(doc);
        return canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
    }
    k->doc = doc;
    return 0;
}

int canal_config_load(canal_config_t *cfg, int *argc, char **argv, canal_error_info_t *err)
{
    for (int i = 1; i < *argc && strcmp(argv[i], "--") != 0; i++)
        if (is_help(argv[i]))
            return canal_config_from_args(cfg, argc, argv, err); /* CANAL_EHELP, nothing changed */
    /* the file first, so the environment and the flags win over it: its name from them */
    const char *path = getenv("CANAL_CONFIG");
    for (int i = 1; i < *argc && strcmp(argv[i], "--") != 0; i++) {
        if (strncmp(argv[i], "--config=", 9) == 0)
            path = argv[i] + 9;
        else if (strcmp(argv[i], "--config") == 0 && i + 1 < *argc)
            path = argv[i + 1];
    }
    struct kept *k = keep();
    if (k == NULL || (k->loaded.argv = calloc((size_t)*argc + 1, sizeof(char *))) == NULL)
        return canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
    memcpy(k->loaded.argv, argv, (size_t)*argc * sizeof(char *));
    k->loaded.argc = *argc;
    k->loaded.base = *cfg;
    if (path != NULL && *path != '\0' && strcmp(path, "off") != 0) {
        int rc = canal__config_file(cfg, path, &k->doc, err);
        if (rc != 0)
            return rc;
    }
    int rc = canal_config_from_env(cfg, err);
    if (rc == 0)
        rc = canal_config_from_args(cfg, argc, argv, err);
    if (rc != 0)
        return rc;
    cfg->loaded = &k->loaded;
    k->loaded.cfg = *cfg;
    for (size_t i = 0; i < cfg->noptions; i++)
        canal_config_value(cfg, cfg->options[i].name, &k->loaded.values[i]);
    return 0;
}

int canal_config_value(const canal_config_t *cfg, const char *name, void *value)
{
    struct canal__option o;
    if (find_option(cfg, name, strlen(name), &o) != 0)
        return CANAL_ENOTFOUND;
    const void *field = o.ptr != NULL ? o.ptr : (const char *)cfg + o.offset;
    size_t size = o.ptr == NULL                 ? o.size
                  : o.kind == CANAL__OPT_SIZE   ? sizeof(size_t)
                  : o.kind == CANAL__OPT_CHOICE ? sizeof(int)
                                                : sizeof(const char *);
    memcpy(value, field, size);
    return 0;
}
