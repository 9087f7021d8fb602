/* SPDX-License-Identifier: MIT */
/*
 * What canal does because of libh2o 2.2.5 and jansson 2.14 as Debian ships them: every read of
 * a private field, every reliance on where a library keeps its bytes, in one file that can go
 * (or shrink) when a newer libh2o or jansson arrives. Each function says which version's
 * behaviour it works around.
 */
#include <string.h>
#include "server_internal.h"

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
