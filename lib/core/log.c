/* SPDX-License-Identifier: MIT */
/*
 * Messages: canal's own (a handler that failed, a socket that could not be bound, a shutdown
 * deadline) and an application's (canal_log(), canal_app_log()). An embeddable library does
 * not write behind its host's back, so each one becomes a record (canal_log_record_t: level,
 * source, message, and the request's context: request ID, route, trace and span) handed to
 * the app's log callback (canal_config_t.log); without one, or where there is no app yet, to
 * the built-in sink: one line on stderr, text or JSON (canal_config_t.log_format).
 *
 * Bounds and escaping: a message is formatted into at most CANAL_LOG_MAX bytes; a longer one
 * is cut on a UTF-8 boundary and ends with "... [cut N bytes]", so a 1 MiB request target
 * makes an 8 KiB message, not a 1 MiB line. The built-in sink escapes what it writes, so
 * every line is one line and a log reader can trust it: text keeps printable ASCII and
 * well-formed UTF-8 and writes '\' as \\ and any other byte (control characters, DEL, a byte
 * of invalid UTF-8) as \xNN; JSON is always valid JSON and UTF-8 ('"' and '\' escaped,
 * control characters and DEL as \u00NN, a byte of invalid UTF-8 as \ufffd). Each line goes
 * out in one fwrite(), so lines of two threads never mix.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "core/core.h"

static const char hex[] = "0123456789abcdef";

/* The length of the well-formed UTF-8 sequence at p (lead byte >= 0x80), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    size_t n = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;
    if ((size_t)(end - p) < n || !canal_utf8_valid((canal_str_t){(const char *)p, n}))
        return 0;
    return n;
}

/* s escaped for a text line (at most 4 bytes a byte) or a JSON string (at most 6) */
static char *escaped(char *o, canal_str_t s, int json)
{
    const unsigned char *p = (const unsigned char *)s.base, *end = p + s.len;
    while (p != end) {
        unsigned c = *p;
        size_t n;
        if (c >= 0x20 && c < 0x7f) {
            if (c == '\\' || (json && c == '"'))
                *o++ = '\\';
            *o++ = (char)c;
            p++;
        } else if (c >= 0x80 && (n = utf8_len(p, end)) > 0) {
            memcpy(o, p, n);
            o += n;
            p += n;
        } else if (json) {
            memcpy(o, c < 0x80 ? "\\u00" : "\\ufffd", 4);
            if (c < 0x80) {
                o[4] = hex[c >> 4], o[5] = hex[c & 15];
            } else {
                memcpy(o + 4, "fd", 2);
            }
            o += 6;
            p++;
        } else {
            o[0] = '\\', o[1] = 'x', o[2] = hex[c >> 4], o[3] = hex[c & 15];
            o += 4;
            p++;
        }
    }
    return o;
}

static const char *level_name(canal_log_level_t level)
{
    switch (level) {
    case CANAL_LOG_ERROR: return "error";
    case CANAL_LOG_WARN: return "warn";
    default: return "info";
    }
}

/* ' name=value' in text, ',"name":"value"' in JSON; nothing for an absent value */
static char *field(char *o, const char *name, canal_str_t v, int json)
{
    if (v.base == NULL)
        return o;
    size_t n = strlen(name);
    if (json) {
        memcpy(o, ",\"", 2);
        memcpy(o + 2, name, n);
        memcpy(o + 2 + n, "\":\"", 3);
        o = escaped(o + 5 + n, v, 1);
        *o++ = '"';
    } else {
        *o++ = ' ';
        memcpy(o, name, n);
        o[n] = '=';
        o = escaped(o + n + 1, v, 0);
    }
    return o;
}

/* The built-in sink: one line on stderr. */
static void to_stderr(const canal_log_record_t *r, canal_log_format_t format)
{
    struct timespec ts;
    struct tm tm;
    char when[40];
    clock_gettime(CLOCK_REALTIME, &ts);
    size_t wn = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", gmtime_r(&ts.tv_sec, &tm));
    snprintf(when + wn, sizeof(when) - wn, ".%03dZ", (int)(ts.tv_nsec / 1000000));
    int json = format == CANAL_LOG_JSON;
    size_t ctx = r->request_id.len + r->route.len + r->trace_id.len + r->span_id.len;
    char small[2048], *line = small;
    size_t need = 256 + 6 * (r->len + ctx);
    if (need > sizeof(small) && (line = malloc(need)) == NULL)
        return; /* out of memory: the message is lost */
    char *o = line;
    canal_str_t msg = {r->msg, r->len};
    if (json) {
        o += sprintf(o, "{\"time\":\"%s\",\"level\":\"%s\",\"source\":\"%s\",\"msg\":\"", when, level_name(r->level),
                     r->source);
        o = escaped(o, msg, 1);
        *o++ = '"';
    } else {
        o += sprintf(o, "%s %s %s: ", when, r->source, level_name(r->level));
        o = escaped(o, msg, 0);
    }
    o = field(o, "request_id", r->request_id, json);
    o = field(o, "route", r->route, json);
    o = field(o, "trace_id", r->trace_id, json);
    o = field(o, "span_id", r->span_id, json);
    if (json)
        *o++ = '}';
    *o++ = '\n';
    fwrite(line, 1, (size_t)(o - line), stderr); /* one call: one line, not interleaved */
    if (line != small)
        free(line);
}

/* Formats the message (bounded), fills the record with req's context and hands it on. */
static void emit(const canal_app_t *app, canal_req_t *req, const char *source, canal_log_level_t level,
                 const char *fmt, va_list ap)
{
    if (app != NULL && (int)level > atomic_load_explicit(&((canal_app_t *)app)->log_level, memory_order_relaxed))
        return; /* --log-level: not worth a line */
    char msg[CANAL_LOG_MAX + 64];
    /* one byte past the bound is kept, to see whether the bound cuts a UTF-8 sequence */
    int n = vsnprintf(msg, CANAL_LOG_MAX + 2, fmt, ap);
    size_t len = n > 0 ? (size_t)n : 0;
    if (len > CANAL_LOG_MAX) {
        /* cut before the sequence that straddles the bound, and say how much went */
        len = CANAL_LOG_MAX;
        while (len > 0 && ((unsigned char)msg[len] & 0xc0) == 0x80)
            len--;
        len += (size_t)snprintf(msg + len, sizeof(msg) - len, CANAL_LOG_CUT_MARK "%zu bytes]", (size_t)n - len);
    }
    canal_log_record_t r = {.level = level, .source = source, .msg = msg, .len = len};
    if (req != NULL) {
        r.request_id = canal_req_id(req);
        if (req->endpoint != NULL) {
            const char *t = canal_route_template(req->endpoint->route);
            r.route = (canal_str_t){t, strlen(t)};
        }
        const canal_trace_t *t = canal_req_trace(req);
        if (t != NULL) {
            r.trace_id = (canal_str_t){t->trace_id, 32};
            r.span_id = (canal_str_t){t->span_id, 16};
        }
    }
    if (app != NULL && app->cfg.log != NULL)
        app->cfg.log(&r, app->cfg.log_data);
    else
        to_stderr(&r, app != NULL ? (canal_log_format_t)atomic_load_explicit(&((canal_app_t *)app)->log_format,
                                                                               memory_order_relaxed)
                                  : CANAL_LOG_TEXT);
}

void canal__log(const canal_app_t *app, canal_log_level_t level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(app, NULL, "canal", level, fmt, ap);
    va_end(ap);
}

void canal__log_req(canal_req_t *req, canal_log_level_t level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(req->app, req, "canal", level, fmt, ap);
    va_end(ap);
}

void canal_log(canal_req_t *req, canal_log_level_t level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(req->app, req, "app", level, fmt, ap);
    va_end(ap);
}

void canal_app_log(const canal_app_t *app, canal_log_level_t level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(app, NULL, "app", level, fmt, ap);
    va_end(ap);
}
