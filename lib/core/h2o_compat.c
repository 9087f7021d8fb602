/* SPDX-License-Identifier: MIT */
/*
 * What canal does because of libh2o 2.2.5 and jansson 2.14 as Debian ships them: every read of
 * a private field, every reliance on where a library keeps its bytes, in one file that can go
 * (or shrink) when a newer libh2o or jansson arrives. Each function says which version's
 * behaviour it works around.
 */
#include <string.h>
#include "core/core.h"

/* ---- finding canal's connection record (libh2o 2.2.5: h2o_conn_t has no user pointer) ---- */

/* The connection of a request, or NULL: every socket of an app is accepted by canal
 * (app.c, accept_one()), which makes its record the socket's on_close.data. */
struct canal_conn *canal__conn_of(h2o_req_t *h)
{
    h2o_socket_t *sock = h->conn->callbacks->get_socket != NULL ? h->conn->callbacks->get_socket(h->conn) : NULL;
    return sock != NULL ? sock->on_close.data : NULL;
}

/* ---- HTTP/1 framing checks libh2o 2.2.5 does not make ---- */

/*
 * RFC 9112 wants a 400 for an HTTP/1.1 request without Host or with two, a request with both
 * Content-Length and Transfer-Encoding handled as an error (or at least the connection closed
 * after it), two Content-Lengths refused, and an obs-fold line refused or unfolded. libh2o
 * 2.2.5 does none of that and keeps none of those fields in req->headers: it keeps the last
 * Host as the authority (or the host configuration's name when there is none), uses the first
 * Content-Length, lets Transfer-Encoding win, and turns a folded line into a header with an
 * empty name.
 *
 * So: a missing Host shows as the configuration's own authority string, and a folded line as
 * an empty name, both cheap to see. For the rest canal reads the request head itself: it is
 * still in the connection's input buffer while the request is handled (libh2o consumes it
 * once the answer has been sent), with the field names lower-cased in place. Without a body,
 * libh2o's strings point into that buffer, and an earlier Host line can only sit between the
 * request line and the Host value libh2o kept: clients send Host first, so that is a few
 * bytes to look at. With a body (Content-Length or Transfer-Encoding: req->entity is set) the
 * whole head is read, and used only if it starts with this request's method and target.
 * sock: the connection's socket (NULL if unknown); folded: a header has an empty name.
 * Returns NULL, or why the request is refused (then the connection is closed: its framing is
 * in doubt).
 */
static const char *http1_head_read(h2o_req_t *h, const char *p, const char *end);
const char *canal__http1_framing_fault(h2o_req_t *h, h2o_socket_t *sock, int folded)
{
    if (h->version >= 0x200)
        return NULL;
    if (folded)
        return "a header line folded onto the next (obs-fold)";
    const char *p = NULL, *end = NULL, *host = h->input.authority.base;
    if (sock != NULL && sock->input != NULL) {
        p = sock->input->bytes, end = p + sock->input->size;
        /* the usual head first, and alone: no body, and " HTTP/1.1\r\nhost: " with the one
         * space nearly every client sends right after the target, so Host is there, once */
        const char *v = h->input.path.base + h->input.path.len + 16;
        if (h->entity.base == NULL && v + 1 == host && (uintptr_t)h->input.method.base >= (uintptr_t)p &&
            (uintptr_t)host < (uintptr_t)end && memcmp(v - 7, "\r\nhost: ", 8) == 0)
            return NULL;
    }
    return http1_head_read(h, p, end);
}

/* The rest of canal__http1_framing_fault(), out of line: the head at p..end (NULL if unknown). */
static __attribute__((noinline)) const char *http1_head_read(h2o_req_t *h, const char *p, const char *end)
{
    const char *host = h->input.authority.base;
    if (h->version == 0x101 && h->hostconf != NULL && h->authority.base == h->hostconf->authority.hostport.base)
        return "an HTTP/1.1 request without a Host header field";
    if (p == NULL)
        return NULL;
    if (h->entity.base == NULL) {
        const char *q = h->input.method.base;
        int n = 0;
        if ((uintptr_t)q < (uintptr_t)p || (uintptr_t)host <= (uintptr_t)q || (uintptr_t)host > (uintptr_t)end)
            return NULL; /* not pointers into this buffer after all */
        const char *v = h->input.path.base + h->input.path.len + 16;
        if (v <= host && memcmp(v - 7, "\r\nhost:", 7) == 0) {
            while (v < host && (*v == ' ' || *v == '\t'))
                v++;
            if (v == host)
                return NULL;
        }
        while ((q = memchr(q, '\n', (size_t)(host - q))) != NULL)
            n += ++q + 5 <= host && memcmp(q, "host:", 5) == 0;
        return n > 1 ? "more than one Host header field" : NULL;
    }
    while (p < end && (*p == '\r' || *p == '\n')) /* empty lines before a request are allowed */
        p++;
    h2o_iovec_t m = h->input.method, t = h->input.path;
    if ((size_t)(end - p) < m.len + t.len + 2 || memcmp(p, m.base, m.len) != 0 || p[m.len] != ' ' ||
        memcmp(p + m.len + 1, t.base, t.len) != 0)
        return NULL;
    int hosts = 0, length = 0, coding = 0;
    p += m.len + 1 + t.len; /* the rest of the request line: " HTTP/1.1" */
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    while (nl != NULL) {
        p = nl + 1;
        if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL)
            return NULL; /* not the head libh2o parsed, after all */
        size_t n = (size_t)(nl - p) - (nl > p && nl[-1] == '\r');
        switch (n == 0 ? 0 : *p) {
        case 0:
            nl = NULL; /* the empty line that ends the head */
            break;
        case ' ':
        case '\t':
            return "a header line folded onto the next (obs-fold)";
        case 'h':
            hosts += n >= 5 && memcmp(p, "host:", 5) == 0;
            break;
        case 'c':
            length += n >= 15 && memcmp(p, "content-length:", 15) == 0;
            break;
        case 't':
            coding += n >= 18 && memcmp(p, "transfer-encoding:", 18) == 0;
            break;
        }
    }
    if (hosts > 1)
        return "more than one Host header field";
    if (length > 1)
        return "more than one Content-Length header field";
    if (coding > 1) /* libh2o reads the last one only; "chunked" twice is not HTTP either */
        return "more than one Transfer-Encoding header field";
    if (length > 0 && coding > 0)
        return "both Content-Length and Transfer-Encoding";
    if (coding > 0 && h->version < 0x101)
        return "Transfer-Encoding in an HTTP/1.0 request";
    return NULL;
}

/* ---- libh2o's own error answers as problem details ---- */

/*
 * libh2o 2.2.5 answers some requests itself, before canal's handler sees them, through
 * h2o_send_error_generic(): a body over the limit (413), broken chunked framing, an unknown
 * Transfer-Encoding or a bad Content-Length (400, connection closed), an Expect other than
 * 100-continue (417), HTTP/2 headers it refuses (400). Those answers are text/plain; the
 * filter below, on canal's path (where h2o binds such requests), rewrites them into RFC 9457
 * problem details like canal's own: "type", "title" (canal's reason phrase), "status", and
 * libh2o's text as "detail". They carry no request ID: no canal request was made. An answer
 * is libh2o's when it is an error whose reason phrase is not the one canal's commit gives
 * (canal_status_reason()'s own string). The one answer this cannot reach is the 400 libh2o
 * writes straight to the socket for a request head it cannot parse: there is no request.
 */
struct problem_ostream {
    h2o_ostream_t super;
    int sent;
};

static void problem_send(h2o_ostream_t *self, h2o_req_t *h, h2o_iovec_t *in, size_t n, h2o_send_state_t state)
{
    struct problem_ostream *o = (struct problem_ostream *)self;
    h2o_iovec_t body = {NULL, 0};
    size_t given = 0;
    for (size_t i = 0; i < n; i++)
        given += in[i].len;
    if (!o->sent && given == 0)
        o->sent = 1; /* a HEAD request: libh2o sends no body, and neither may the rewrite */
    if (!o->sent) {
        o->sent = 1;
        char detail[256];
        size_t len = 0;
        for (size_t i = 0; i < n && len < sizeof(detail) - 1; i++) {
            size_t k = in[i].len < sizeof(detail) - 1 - len ? in[i].len : sizeof(detail) - 1 - len;
            memcpy(detail + len, in[i].base, k);
            len += k;
        }
        detail[len] = '\0';
        json_t *problem = canal_problem(h->res.status, detail);
        body.base = problem != NULL ? canal__json_write(&h->pool, problem, 256, &body.len) : NULL;
        json_decref(problem);
        if (body.base == NULL)
            body = h2o_iovec_init(H2O_STRLIT("{\"type\":\"about:blank\"}"));
        h->res.content_length = body.len;
    }
    h2o_ostream_send_next(&o->super, h, body.base != NULL ? &body : NULL, body.base != NULL, state);
}

struct problem_filter {
    h2o_filter_t super;
    canal_app_t *app;
};

static void problem_setup(h2o_filter_t *self, h2o_req_t *h, h2o_ostream_t **slot)
{
    int status = h->res.status;
    if (status >= 400 && h->res.reason != canal_status_reason(status)) {
        ssize_t at = h2o_find_header(&h->res.headers, H2O_TOKEN_CONTENT_TYPE, -1);
        if (at >= 0)
            h->res.headers.entries[at].value = h2o_iovec_init(H2O_STRLIT("application/problem+json"));
        h->res.reason = canal_status_reason(status);
        /* libh2o answered before any route was matched: the app's heads, as for a 404 */
        const canal_app_t *app = ((struct problem_filter *)self)->app;
        for (size_t i = 0; i < app->nheads; i++)
            app->heads[i].fn(NULL, h, app->heads[i].arg);
        struct problem_ostream *o = (struct problem_ostream *)h2o_add_ostream(h, sizeof(*o), slot);
        o->super.do_send = problem_send;
        o->sent = 0;
        slot = &o->super.next;
    }
    h2o_setup_next_ostream(h, slot);
}

void canal__h2o_errors_as_problems(canal_app_t *app)
{
    struct problem_filter *f = (struct problem_filter *)h2o_create_filter(app->pathconf, sizeof(*f));
    f->super.on_setup_ostream = problem_setup;
    f->app = app;
}

/* ---- a connection's unread bytes (libh2o 2.2.5: no call says what waits in the buffer) ---- */

/* How many bytes wait in sock's input buffer. libh2o consumes a request head only once its
 * request has been answered, so between requests these are the next request's. */
size_t canal__sock_unread(h2o_socket_t *sock)
{
    return sock->input->size;
}

/* 1 if those bytes hold a whole request head ("\r\n\r\n"). */
int canal__sock_has_head(h2o_socket_t *sock)
{
    return memmem(sock->input->bytes, sock->input->size, "\r\n\r\n", 4) != NULL;
}

/* ---- private fields ---- */

void canal__h2_graceful_timer_unlink(h2o_context_t *ctx)
{
    /* libh2o 2.2.5: h2o's shutdown request arms an HTTP/2 graceful-shutdown timer that nothing
     * unlinks; a context disposed of with it linked leaves the loop's timer list dangling */
    if (h2o_timeout_is_linked(&ctx->http2._graceful_shutdown_timeout))
        h2o_timeout_unlink(&ctx->http2._graceful_shutdown_timeout);
}

h2o_timeout_entry_t *canal__timeout_first(h2o_timeout_t *t)
{
    /* libh2o 2.2.5 has no call that walks a timer list: its entries are in _entries by _link */
    if (h2o_linklist_is_empty(&t->_entries))
        return NULL;
    return H2O_STRUCT_FROM_MEMBER(h2o_timeout_entry_t, _link, t->_entries.next);
}

void canal__json_error_set_code(json_error_t *err, enum json_error_code code)
{
    /* jansson 2.14 has no setter: json_error_code() reads the last byte of the text */
    err->text[JSON_ERROR_TEXT_LENGTH - 1] = (char)code;
}
