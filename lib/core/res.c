/* SPDX-License-Identifier: MIT */
/*
 * The answer: one model for every request. A handler (or canal itself, or the controller
 * layer) sets status, headers and body on the request; nothing is sent until canal commits
 * the answer, once: when the handler returns, when a deferred answer completes
 * (canal_pending_complete(), a posted completion, an offload's done), or when canal answers
 * by itself (a refused request, the router's 404/405, a deadline's 504). canal__commit() is
 * that one place: it runs the request's commit hook (the controller layer's after-filters),
 * turns a recorded failure (canal_req_fail()) or a missing answer into a 500 (or the
 * development error page), and hands status, Content-Type, Content-Length and one body buffer
 * in request memory to h2o in a single h2o_send(). A streamed answer (stream.c) is committed
 * the same way, early, by canal__commit_stream(): the same hook and head, no Content-Length,
 * and a generator of its own instead of the one body. HEAD answers keep Content-Length and leave
 * the body out (libh2o leaves that to the handler). JSON is dumped straight into request
 * memory, with a size guess per worker so that most answers are dumped once.
 *
 * Problem details (RFC 9457) are marked as such when set (req->res.problem), with the
 * request ID and the markup escaping applied then.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/core.h"

const char *canal_status_reason(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 101: return "Switching Protocols";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 422: return "Unprocessable Content";
    case 426: return "Upgrade Required";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    }
    return "Unknown";
}

static h2o_generator_t generator = {NULL, NULL}; /* nothing to proceed or stop: one-shot answers */
static h2o_iovec_t request_id_name = {"x-request-id", 12}; /* not one of h2o's tokens */
static h2o_iovec_t traceparent_name = {"traceparent", 11};

/* Problem details quote request values back ("The value '...' is not valid for size."). In
 * them '<', '>' and '&' are written as \u003c, \u003e and \u0026, as ASP.NET Core's default
 * JSON encoder does: the same JSON to a JSON parser, and no markup for a browser or a log
 * viewer that sniffs it. In JSON text these bytes can only be inside strings, so a byte-wise
 * rewrite is exact. */
static const char *escape_markup(canal_req_t *req, const char *json, size_t *len)
{
    size_t extra = 0;
    for (size_t i = 0; i < *len; i++)
        extra += (json[i] == '<' || json[i] == '>' || json[i] == '&') * 5;
    if (extra == 0)
        return json;
    char *out = canal_req_alloc(req, *len + extra), *o = out;
    for (size_t i = 0; i < *len; i++) {
        char c = json[i];
        if (c == '<' || c == '>' || c == '&') {
            memcpy(o, c == '<' ? "\\u003c" : c == '>' ? "\\u003e" : "\\u0026", 6);
            o += 6;
        } else {
            *o++ = c;
        }
    }
    *len += extra;
    return out;
}

/* Sets the answer: body must live in request memory (or be static). Inline, so that canal's
 * own literal types are measured when it is compiled. */
static inline int set_answer(canal_req_t *req, int status, const char *type, const void *body, size_t len)
{
    if (req->res.committed)
        return CANAL_ESTATE;
    req->res.status = status;
    req->res.type = (canal_str_t){type, type != NULL ? strlen(type) : 0};
    req->res.body = body;
    req->res.len = len;
    req->res.problem = 0;
    return 0;
}

/* Puts the head of the answer set on req (status, request ID, Content-Type) into h2o's
 * response; the answer is committed from here on. */
static inline __attribute__((always_inline)) void put_head(canal_req_t *req)
{
    h2o_req_t *h = req->h2o;
    int status = req->res.status;
    req->res.committed = 1;
    req->res.nheaders = h->res.headers.size;
    if (req->pending != NULL)
        canal__pending_answered(req);
    h->res.status = status;
    h->res.reason = status == 200 ? "OK" : canal_status_reason(status);
    if (req->app->cfg.request_id) {
        /* appended by hand: h2o_add_header_by_str() would allocate a copy of the name */
        canal_str_t id = canal_req_id(req);
        h2o_vector_reserve(&h->pool, &h->res.headers, h->res.headers.size + 1);
        h->res.headers.entries[h->res.headers.size++] =
            (h2o_header_t){&request_id_name, NULL, h2o_iovec_init(id.base, id.len)};
    }
    if (req->app->cfg.trace_echo) {
        const canal_trace_t *t = canal_req_trace(req);
        h2o_vector_reserve(&h->pool, &h->res.headers, h->res.headers.size + 1);
        h->res.headers.entries[h->res.headers.size++] =
            (h2o_header_t){&traceparent_name, NULL, h2o_iovec_init(t->traceparent, 55)};
    }
    if (req->res.type.base != NULL)
        h2o_add_header(&h->pool, &h->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, req->res.type.base,
                       req->res.type.len);
    /* the features' heads (core/feature.h): the route's, or the app's without a route */
    const struct canal_endpoint *ep = req->endpoint;
    const struct canal__head *hd = ep != NULL ? ep->heads : req->app->heads;
    for (size_t i = 0, n = ep != NULL ? ep->nheads : req->app->nheads; i < n; i++)
        hd[i].fn(req, h, hd[i].arg);
}

/* A status whose answers have no body. */
static inline int no_content(int status)
{
    return status != 200 && (status < 200 || status == 204 || status == 304);
}

/* Sends the answer set on req (canal__commit() has made sure there is one). */
static inline __attribute__((always_inline)) void send_answer(canal_req_t *req)
{
    h2o_req_t *h = req->h2o;
    put_head(req);
    /* after the heads: one may have made the answer a 304 (an ETag that matched) */
    int empty = no_content(req->res.status);
    h->res.content_length = empty ? SIZE_MAX : req->res.len;
    h2o_start_response(h, &generator);
    if (empty || req->is_head) {
        h2o_send(h, NULL, 0, H2O_SEND_STATE_FINAL);
    } else {
        h2o_iovec_t buf = h2o_iovec_init(req->res.body, req->res.len);
        h2o_send(h, &buf, 1, H2O_SEND_STATE_FINAL);
    }
}

static void answer_failure(canal_req_t *req);

/* The request's commit hook (the controller's after-filters), once, just before the commit. */
static inline void run_commit_hook(canal_req_t *req)
{
    if (req->on_commit != NULL) {
        canal_commit_fn fn = req->on_commit;
        req->on_commit = NULL;
        fn(req, req->on_commit_data);
    }
}

void canal__commit(canal_req_t *req)
{
    if (req->res.committed)
        return;
    run_commit_hook(req);
    if (req->error != NULL || req->res.status == 0)
        answer_failure(req);
    send_answer(req);
}

/* A streamed answer is the same answer committed early: the hook runs, a failure is answered
 * as always; otherwise the head goes with no Content-Length and gen produces the body (HEAD
 * and statuses without a body: the head alone, ended at once). */
int canal__commit_stream(canal_req_t *req, h2o_generator_t *gen)
{
    run_commit_hook(req);
    if (req->error != NULL) {
        answer_failure(req);
        send_answer(req);
        return -1;
    }
    if (req->res.status == 0)
        req->res.status = 200;
    h2o_req_t *h = req->h2o;
    int empty = no_content(req->res.status) || req->is_head;
    put_head(req);
    h->res.content_length = SIZE_MAX;
    h2o_start_response(h, gen);
    if (empty)
        h2o_send(h, NULL, 0, H2O_SEND_STATE_FINAL);
    return empty;
}

void canal_res_compress(canal_req_t *req, int on)
{
    req->h2o->compress_hint = on ? H2O_COMPRESS_HINT_ENABLE : H2O_COMPRESS_HINT_DISABLE;
}

int canal_res_on_commit(canal_req_t *req, canal_commit_fn fn, void *data)
{
    if (req->res.committed)
        return CANAL_ESTATE;
    if (req->on_commit != NULL)
        return CANAL_EEXIST;
    req->on_commit = fn;
    req->on_commit_data = data;
    return 0;
}

static int has_ctl(const char *s)
{
    for (; *s; s++)
        if (*s == '\r' || *s == '\n')
            return 1;
    return 0;
}

int canal_res_header(canal_req_t *req, const char *name, const char *value)
{
    if (req->res.committed)
        return CANAL_ESTATE;
    size_t nlen = strlen(name), vlen = strlen(value);
    if (nlen == 0 || has_ctl(name) || has_ctl(value) || memchr(name, ':', nlen) != NULL)
        return CANAL_EINVAL;
    h2o_mem_pool_t *pool = &req->h2o->pool;
    char *lname = h2o_mem_alloc_pool(pool, nlen);
    for (size_t i = 0; i < nlen; i++)
        lname[i] = (char)h2o_tolower(name[i]);
    h2o_iovec_t v = h2o_strdup(pool, value, vlen);
    h2o_add_header_by_str(pool, &req->h2o->res.headers, lname, nlen, 1, NULL, v.base, v.len);
    return 0;
}

int canal_res_body(canal_req_t *req, int status, const char *content_type, const void *body, size_t len)
{
    if (req->res.committed)
        return CANAL_ESTATE;
    char *copy = NULL;
    if (len > 0 && !req->is_head) {
        copy = h2o_mem_alloc_pool(&req->h2o->pool, len);
        memcpy(copy, body, len);
    }
    return set_answer(req, status, content_type, copy, len);
}

int canal_res_body_static(canal_req_t *req, int status, const char *content_type, const void *body, size_t len)
{
    return set_answer(req, status, content_type, body, len);
}

int canal_res_text(canal_req_t *req, int status, const char *text)
{
    return canal_res_body(req, status, "text/plain; charset=utf-8", text, strlen(text));
}

int canal_res_status(canal_req_t *req, int status)
{
    if (req->res.committed)
        return CANAL_ESTATE;
    req->res.status = status;
    return 0;
}

int canal_res_status_code(const canal_req_t *req)
{
    return req->res.status;
}

int canal_res_is_problem(const canal_req_t *req)
{
    return req->res.problem;
}

int canal_res_committed(const canal_req_t *req)
{
    return req->res.committed;
}

char *canal_req_json_dump(canal_req_t *req, const json_t *json, size_t *len)
{
    struct canal_worker *w = req->worker;
    char *buf = canal__json_write(&req->h2o->pool, json, w->json_hint, len);
    /* next time, start with room for an answer this size (and some), at least 512 bytes */
    if (buf != NULL)
        w->json_hint = *len + *len / 8 < 512 ? 512 : *len + *len / 8;
    return buf;
}

/* Problem details name the request when request IDs are on ("requestId"), and its trace
 * when tracing is on ("traceId": the W3C form "00-TRACE-SPAN-FLAGS", as ASP.NET Core's), so
 * that a client's report can be matched with the server's log. The members are written after
 * the dump, in place of the object's closing brace: neither needs escaping (canal_req_id()
 * takes only printable ASCII without quotes or backslashes; the trace is hex), and this costs
 * a copy instead of jansson members. */
static char *with_ids(canal_req_t *req, char *json, size_t *len)
{
    const canal_config_t *cfg = &req->app->cfg;
    if ((!cfg->request_id && !cfg->trace) || *len < 2 || json[*len - 1] != '}')
        return json;
    canal_str_t id = canal_req_id(req);
    const canal_trace_t *t = canal_req_trace(req);
    static const char rid[] = ",\"requestId\":\"", tid[] = ",\"traceId\":\"";
    size_t n = *len - 1;
    char *out = h2o_mem_alloc_pool(&req->h2o->pool, n + sizeof(rid) + id.len + sizeof(tid) + 55 + 2), *o = out + n;
    memcpy(out, json, n);
    if (id.base != NULL) {
        memcpy(o, rid, sizeof(rid) - 1);
        memcpy(o + sizeof(rid) - 1, id.base, id.len);
        o += sizeof(rid) - 1 + id.len;
        *o++ = '"';
    }
    if (t != NULL) {
        memcpy(o, tid, sizeof(tid) - 1);
        memcpy(o + sizeof(tid) - 1, t->traceparent, 55);
        o += sizeof(tid) - 1 + 55;
        *o++ = '"';
    }
    *o++ = '}';
    *len = (size_t)(o - out);
    return out;
}

static int set_problem(canal_req_t *req, int status, const json_t *problem)
{
    size_t n;
    if (req->res.committed)
        return CANAL_ESTATE;
    char *buf = problem != NULL ? canal_req_json_dump(req, problem, &n) : NULL;
    if (buf == NULL)
        return CANAL_EINVAL;
    buf = with_ids(req, buf, &n);
    const char *body = escape_markup(req, buf, &n);
    set_answer(req, status, "application/problem+json", body, n);
    req->res.problem = 1;
    return 0;
}

int canal_res_json(canal_req_t *req, int status, const json_t *body)
{
    size_t n;
    if (req->res.committed)
        return CANAL_ESTATE;
    char *buf = canal_req_json_dump(req, body, &n);
    if (buf == NULL)
        return CANAL_EINVAL;
    return set_answer(req, status, "application/json", buf, n);
}

int canal_res_json_new(canal_req_t *req, int status, json_t *body)
{
    int rc = canal_res_json(req, status, body);
    json_decref(body);
    return rc;
}

int canal_res_jw(canal_req_t *req, int status, canal_jw_t *w)
{
    const char *body;
    size_t n;
    if (req->res.committed)
        return CANAL_ESTATE;
    int rc = canal_jw_finish(w, &body, &n);
    if (rc != 0) {
        /* a failure, not an answer: a body written half-way is never sent */
        canal_req_fail(req, "JSON writer: %s", canal_jw_error_text(w));
        return rc;
    }
    return set_answer(req, status, "application/json", body, n);
}

int canal_res_problem_new(canal_req_t *req, int status, json_t *members)
{
    json_t *p = json_object();
    const char *k;
    json_t *v;
    if (p == NULL) {
        json_decref(members);
        return CANAL_ENOMEM;
    }
    json_t *type = members ? json_object_get(members, "type") : NULL;
    json_t *title = members ? json_object_get(members, "title") : NULL;
    json_object_set_new(p, "type", type ? json_incref(type) : json_string("about:blank"));
    json_object_set_new(p, "title", title ? json_incref(title) : json_string(canal_status_reason(status)));
    json_object_set_new(p, "status", json_integer(status));
    if (members != NULL)
        json_object_foreach(members, k, v)
        {
            if (strcmp(k, "type") != 0 && strcmp(k, "title") != 0 && strcmp(k, "status") != 0)
                json_object_set(p, k, v);
        }
    json_decref(members);
    if (req->app->cfg.request_id)
        json_object_del(p, "requestId"); /* canal's own is added */
    if (req->app->cfg.trace)
        json_object_del(p, "traceId");
    int rc = set_problem(req, status, p);
    json_decref(p);
    return rc;
}

json_t *canal_problem(int status, const char *detail)
{
    json_t *p = json_pack("{s:s, s:s, s:i}", "type", "about:blank", "title", canal_status_reason(status),
                          "status", status);
    if (p != NULL && detail != NULL) {
        /* detail may carry request bytes that are not UTF-8: jansson refuses those */
        json_t *d = json_string(detail);
        json_object_set_new(p, "detail", d ? d : json_string("(not valid UTF-8)"));
    }
    return p;
}

int canal_res_problem(canal_req_t *req, int status, const char *detail_fmt, ...)
{
    char detail[512];
    if (detail_fmt != NULL) {
        va_list ap;
        va_start(ap, detail_fmt);
        vsnprintf(detail, sizeof(detail), detail_fmt, ap);
        va_end(ap);
    }
    json_t *p = canal_problem(status, detail_fmt ? detail : NULL);
    int rc = set_problem(req, status, p);
    json_decref(p);
    return rc;
}

int canal_res_redirect(canal_req_t *req, int status, const char *location)
{
    if (status != 301 && status != 302 && status != 303 && status != 307 && status != 308)
        return CANAL_EINVAL;
    int rc = canal_res_header(req, "location", location);
    return rc != 0 ? rc : set_answer(req, status, NULL, NULL, 0);
}

/* ---- error pages ---- */

static void html_escaped(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(s[i], f);
        }
    }
}

static void row(FILE *f, canal_str_t k, canal_str_t v)
{
    fputs("<tr><th>", f);
    html_escaped(f, k.base, k.len);
    fputs("</th><td>", f);
    html_escaped(f, v.base, v.len);
    fputs("</td></tr>\n", f);
}

static void developer_page(canal_req_t *req)
{
    h2o_req_t *h = req->h2o;
    char *page = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&page, &len);
    if (f == NULL) {
        canal_res_problem(req, 500, NULL);
        return;
    }
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>500 Internal Server Error"
          "</title>\n<style>body{font-family:sans-serif;margin:2em}th{text-align:left;padding-right:"
          "1em;vertical-align:top}td{font-family:monospace;word-break:break-all}"
          "pre{background:#fee;padding:1em;white-space:pre-wrap}</style></head>\n<body>\n"
          "<h1>500 Internal Server Error</h1>\n<p>This page is shown because the app runs with "
          "--env development. In production the client gets a bare 500.</p>\n<h2>Error</h2>\n<pre>",
          f);
    html_escaped(f, req->error, strlen(req->error));
    fputs("</pre>\n<h2>Request</h2>\n<pre>", f);
    html_escaped(f, h->method.base, h->method.len);
    fputc(' ', f);
    html_escaped(f, h->path.base, h->path.len);
    fprintf(f, " HTTP/%d.%d</pre>\n", h->version >> 8, h->version & 0xff);
    for (const struct canal_note *n = req->notes; n != NULL; n = n->next) {
        if (n == req->notes)
            fputs("<h2>Notes</h2>\n<table>\n", f);
        row(f, (canal_str_t){n->key, strlen(n->key)}, (canal_str_t){n->value, strlen(n->value)});
        if (n->next == NULL)
            fputs("</table>\n", f);
    }
    if (req->endpoint != NULL) {
        const char *tmpl = canal_route_template(req->match->route);
        fputs("<h2>Route</h2>\n<table>\n", f);
        row(f, (canal_str_t){"template", 8}, (canal_str_t){tmpl, strlen(tmpl)});
        for (size_t i = 0; i < req->match->nparams; i++)
            row(f, req->match->params[i].name, req->match->params[i].value);
        fputs("</table>\n", f);
    }
    const canal_param_t *qp;
    size_t nq = canal_req_query_all(req, &qp);
    if (nq > 0) {
        fputs("<h2>Query</h2>\n<table>\n", f);
        for (size_t i = 0; i < nq; i++)
            row(f, qp[i].name, qp[i].value);
        fputs("</table>\n", f);
    }
    fputs("<h2>Headers</h2>\n<table>\n", f);
    for (size_t i = 0; i < h->headers.size; i++)
        row(f, (canal_str_t){h->headers.entries[i].name->base, h->headers.entries[i].name->len},
            (canal_str_t){h->headers.entries[i].value.base, h->headers.entries[i].value.len});
    fputs("</table>\n</body></html>\n", f);
    fclose(f);
    canal_res_body(req, 500, "text/html; charset=utf-8", page, len);
    free(page);
}

/* The answer to a failed request (req->error, or no answer set): logged once, then a bare 500
 * problem in production and the error page in development, whatever the handler had set. */
static void answer_failure(canal_req_t *req)
{
    if (req->error == NULL)
        req->error = "the handler set no answer";
    canal__log_req(req, CANAL_LOG_ERROR, "%.*s %.*s: %s", (int)req->method.len, req->method.base,
                   (int)req->path.len, req->path.base, req->error);
    if (req->app->cfg.env == CANAL_ENV_DEVELOPMENT)
        developer_page(req);
    else
        canal_res_problem(req, 500, NULL);
}
