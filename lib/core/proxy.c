/* SPDX-License-Identifier: MIT */
/*
 * Behind a proxy: who the client is, and which request this is.
 *
 * Trusted proxies. X-Forwarded-For and Forwarded (RFC 7239) are only words a client can type,
 * so they are believed only when the connection comes from an address the operator listed
 * (trusted_proxies: addresses and CIDRs). Then the hops are walked from the right (the hop
 * nearest to us) to the left: each hop a trusted proxy vouches for is taken, and the walk
 * stops at the first address that is not a trusted proxy, which is the client. A hop that is
 * not an address ("unknown", an obfuscated "_name", garbage) ends the walk too: the client is
 * then the last proxy we trust, the only address anyone vouched for. When a request carries
 * Forwarded, it is used and X-Forwarded-For ignored (a proxy that writes the standard header
 * is taken at its word). A unix socket's peer has no address: it is a process on this machine
 * (the proxy in front, as a rule), trusted only if the list has the word "unix"; its own
 * address is "-". All of this runs only when asked (canal_req_client_addr(), or the
 * access log when proxies are configured).
 *
 * Request IDs. When request_id is on, each answer carries X-Request-Id: the one a trusted
 * proxy sent (if it looks like an ID), else one made here from a random per-process prefix,
 * the worker's index and the worker's own counter ("5f3a09c1-0-1a"): unique per process
 * without any shared counter, and cheap (a few dozen instructions, made only when the answer
 * is sent or the handler asks).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "core/core.h"
#include "observability/acclog_internal.h"

/* Parses an address, IPv4 or IPv6; an IPv4-mapped IPv6 address becomes IPv4. */
static int parse_addr(const char *s, size_t len, struct canal_addr *out)
{
    char buf[INET6_ADDRSTRLEN + 1];
    if (len == 0 || len >= sizeof(buf) || memchr(s, '\0', len) != NULL)
        return -1; /* a NUL would cut the text short of what was sent */
    memcpy(buf, s, len);
    buf[len] = '\0';
    memset(out, 0, sizeof(*out));
    if (inet_pton(AF_INET, buf, out->bytes) == 1) {
        out->family = 4;
        return 0;
    }
    if (inet_pton(AF_INET6, buf, out->bytes) != 1)
        return -1;
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(out->bytes, mapped, 12) == 0) {
        memmove(out->bytes, out->bytes + 12, 4);
        memset(out->bytes + 4, 0, 12);
        out->family = 4;
    } else {
        out->family = 6;
    }
    return 0;
}

/* One entry: an address (a whole one) or a CIDR. 0, or -1 if it is neither. */
static int parse_cidr(const char *p, size_t len, struct canal_cidr *c)
{
    const char *slash = memchr(p, '/', len);
    size_t alen = slash ? (size_t)(slash - p) : len;
    struct canal_addr a = {0};
    long bits = -1;
    if (slash != NULL) {
        char *end;
        errno = 0;
        bits = strtol(slash + 1, &end, 10);
        if (end != p + len || slash + 1 == end || errno != 0 || bits < 0)
            return -1;
    }
    if (parse_addr(p, alen, &a) != 0)
        return -1;
    unsigned max = a.family == 4 ? 32 : 128;
    /* an IPv4-mapped prefix (::ffff:10.0.0.0/104) counts in IPv4 bits */
    if (slash != NULL && a.family == 4 && memchr(p, ':', alen) != NULL)
        bits -= 96;
    if (slash != NULL && (bits < 0 || bits > (long)max))
        return -1;
    *c = (struct canal_cidr){.addr = a, .bits = (uint8_t)(slash != NULL ? bits : (long)max)};
    return 0;
}

int canal__proxies_parse(const char *list, struct canal_cidr **out, size_t *count,
                         canal_error_info_t *err)
{
    struct canal_cidr *cidrs = NULL;
    size_t n = 0;
    const char *p = list != NULL ? list : "";
    if (out != NULL)
        *out = NULL;
    *count = 0;
    while (*p != '\0') {
        size_t skip = strspn(p, ", \t"), len;
        p += skip;
        if (*p == '\0')
            break;
        len = strcspn(p, ", \t");
        /* "unix", the peers of unix sockets: an entry of family 0, which only they have */
        struct canal_cidr c = {.bits = 0};
        if (!(len == 4 && strncasecmp(p, "unix", 4) == 0) && parse_cidr(p, len, &c) != 0) {
            if (err != NULL) {
                err->code = CANAL_EINVAL;
                err->position = (size_t)(p - list);
                snprintf(err->message, sizeof(err->message),
                         "trusted proxies: '%.*s' is not an address or CIDR", (int)(len > 60 ? 60 : len), p);
            }
            free(cidrs);
            return CANAL_EINVAL;
        }
        if (out != NULL) {
            struct canal_cidr *grown = realloc(cidrs, (n + 1) * sizeof(*grown));
            if (grown == NULL) {
                free(cidrs);
                return CANAL_ENOMEM;
            }
            cidrs = grown;
            cidrs[n] = c;
        }
        n++;
        p += len;
    }
    if (out != NULL)
        *out = cidrs;
    *count = n;
    return 0;
}

static int in_cidr(const struct canal_addr *a, const struct canal_cidr *c)
{
    if (a->family != c->addr.family)
        return 0;
    unsigned whole = c->bits / 8, rest = c->bits % 8;
    if (memcmp(a->bytes, c->addr.bytes, whole) != 0)
        return 0;
    if (rest == 0)
        return 1;
    uint8_t mask = (uint8_t)(0xff << (8 - rest));
    return (a->bytes[whole] & mask) == (c->addr.bytes[whole] & mask);
}

int canal__proxies_trust(const canal_app_t *app, const struct canal_addr *a)
{
    for (size_t i = 0; i < app->nproxies; i++)
        if (in_cidr(a, &app->proxies[i]))
            return 1;
    return 0;
}

/* One hop of X-Forwarded-For ("1.2.3.4", "1.2.3.4:80", "::1", "[::1]:80"), or the value of a
 * Forwarded "for=" (the same, maybe quoted). */
static int parse_hop(const char *s, size_t len, struct canal_addr *out)
{
    while (len > 0 && (*s == ' ' || *s == '\t'))
        s++, len--;
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    if (len >= 2 && s[0] == '"' && s[len - 1] == '"')
        s++, len -= 2;
    if (len > 0 && s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (close == NULL)
            return -1;
        size_t after = len - (size_t)(close + 1 - s);
        if (after != 0 && close[1] != ':')
            return -1;
        return parse_addr(s + 1, (size_t)(close - s - 1), out) == 0 && out->family == 6 ? 0 : -1;
    }
    const char *colon = memchr(s, ':', len);
    if (colon != NULL && memchr(colon + 1, ':', len - (size_t)(colon + 1 - s)) == NULL)
        len = (size_t)(colon - s); /* IPv4 with a port */
    return parse_addr(s, len, out);
}

/* The "for=" value of one Forwarded element ("for=1.2.3.4;proto=https"), or NULL. */
static const char *forwarded_for(const char *s, size_t len, size_t *vlen)
{
    size_t i = 0;
    while (i < len) {
        while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == ';'))
            i++;
        size_t start = i;
        while (i < len && s[i] != '=' && s[i] != ';')
            i++;
        size_t klen = i - start;
        while (klen > 0 && s[start + klen - 1] == ' ')
            klen--;
        if (i >= len || s[i] != '=')
            continue;
        i++;
        size_t vstart = i;
        if (i < len && s[i] == '"') {
            for (i++; i < len && s[i] != '"'; i++)
                if (s[i] == '\\')
                    i++;
            if (i < len)
                i++;
        } else {
            while (i < len && s[i] != ';')
                i++;
        }
        if (klen == 3 && strncasecmp(s + start, "for", 3) == 0) {
            *vlen = (i > len ? len : i) - vstart;
            return s + vstart;
        }
    }
    return NULL;
}

/* The walk over the hops, right to left: the client so far, and whether it is final. */
struct walk {
    const canal_app_t *app;
    int forwarded;
    struct canal_addr client;
    int done;
};

static int take_hop(struct walk *w, const char *s, size_t len)
{
    struct canal_addr a;
    if (w->forwarded) {
        size_t vlen;
        s = forwarded_for(s, len, &vlen);
        if (s == NULL)
            return w->done = 1;
        len = vlen;
    }
    if (parse_hop(s, len, &a) != 0)
        return w->done = 1; /* the client stays the last proxy we trust */
    w->client = a;
    if (!canal__proxies_trust(w->app, &a))
        w->done = 1;
    return w->done;
}

/* Splits a list header value on commas outside quoted strings and takes its hops right to
 * left until the walk ends. */
static void walk_value(struct walk *w, const char *s, size_t len)
{
    /* find the element boundaries left to right (quotes may hide commas), then walk back */
    size_t starts[64], n = 0, i = 0;
    int quoted = 0;
    starts[n++] = 0;
    for (; i < len; i++) {
        if (s[i] == '"')
            quoted = !quoted;
        else if (s[i] == '\\' && quoted)
            i++;
        else if (s[i] == ',' && !quoted) {
            if (n == sizeof(starts) / sizeof(starts[0])) {
                /* more hops than anyone chains: keep the nearest ones */
                memmove(starts, starts + 1, (n - 1) * sizeof(starts[0]));
                n--;
            }
            starts[n++] = i + 1;
        }
    }
    for (size_t k = n; k-- > 0 && !w->done;) {
        size_t b = starts[k], e = k + 1 < n ? starts[k + 1] - 1 : len;
        take_hop(w, s + b, e - b);
    }
}

int canal__client_from_headers(const canal_app_t *app, const struct canal_addr *peer,
                               const canal_str_t *fwd, size_t nfwd, const canal_str_t *xff,
                               size_t nxff, struct canal_addr *client)
{
    struct walk w = {app, nfwd > 0, *peer, 0};
    *client = *peer;
    if (!canal__proxies_trust(app, peer))
        return 0;
    const canal_str_t *vals = nfwd > 0 ? fwd : xff;
    size_t n = nfwd > 0 ? nfwd : nxff;
    /* repeated fields form one list, in order: the last field holds the nearest hops */
    while (n > 0 && !w.done) {
        n--;
        walk_value(&w, vals[n].base, vals[n].len);
    }
    *client = w.client;
    return 1;
}

static int peer_addr(h2o_conn_t *conn, struct canal_addr *out)
{
    struct sockaddr_storage ss;
    memset(out, 0, sizeof(*out));
    if (conn->callbacks->get_peername == NULL ||
        conn->callbacks->get_peername(conn, (struct sockaddr *)&ss) == 0)
        return -1;
    if (ss.ss_family == AF_INET) {
        out->family = 4;
        memcpy(out->bytes, &((struct sockaddr_in *)&ss)->sin_addr, 4);
    } else if (ss.ss_family == AF_INET6) {
        char text[INET6_ADDRSTRLEN];
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, text, sizeof(text));
        return parse_addr(text, strlen(text), out); /* folds IPv4-mapped addresses */
    } else if (ss.ss_family == AF_UNIX) {
        out->family = 0; /* a local process: trusted if the list says "unix" */
    } else {
        return -1;
    }
    return 0;
}

/* The values of every field with this name, in order, in request memory. */
static size_t header_values(h2o_req_t *h, const char *name, size_t nlen, canal_str_t **out)
{
    const h2o_headers_t *hs = &h->headers;
    size_t n = 0;
    *out = NULL;
    for (ssize_t c = -1; (c = h2o_find_header_by_str(hs, name, nlen, c)) != -1;)
        n++;
    if (n == 0)
        return 0;
    *out = h2o_mem_alloc_pool(&h->pool, n * sizeof(**out));
    n = 0;
    for (ssize_t c = -1; (c = h2o_find_header_by_str(hs, name, nlen, c)) != -1;)
        (*out)[n++] = (canal_str_t){hs->entries[c].value.base, hs->entries[c].value.len};
    return n;
}

canal_str_t canal__client_addr(const canal_app_t *app, h2o_req_t *h)
{
    struct canal_addr peer, client;
    if (peer_addr(h->conn, &peer) != 0)
        return (canal_str_t){"-", 1}; /* not over IP */
    client = peer;
    if (app->nproxies > 0 && canal__proxies_trust(app, &peer)) {
        canal_str_t *fwd, *xff = NULL;
        size_t nfwd = header_values(h, H2O_STRLIT("forwarded"), &fwd), nxff = 0;
        if (nfwd == 0)
            nxff = header_values(h, H2O_STRLIT("x-forwarded-for"), &xff);
        canal__client_from_headers(app, &peer, fwd, nfwd, xff, nxff, &client);
    }
    if (client.family == 0) /* the unix socket's peer itself: no address to give */
        return (canal_str_t){"-", 1};
    char *text = h2o_mem_alloc_pool(&h->pool, INET6_ADDRSTRLEN);
    if (client.family == 4) /* the access log's formatter: inet_ntop's sprintf costs ~1,700 */
        return (canal_str_t){text, canal__ipv4_text(text, client.bytes)};
    inet_ntop(AF_INET6, client.bytes, text, INET6_ADDRSTRLEN);
    return (canal_str_t){text, strlen(text)};
}

canal_str_t canal_req_client_addr(canal_req_t *req)
{
    if (req->client_addr.base == NULL)
        req->client_addr = canal__client_addr(req->app, req->h2o);
    return req->client_addr;
}

/* ---- request IDs ---- */

void canal__request_id_init(canal_app_t *app)
{
    uint32_t r = 0;
    if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
        r = (uint32_t)time(NULL) * 2654435761u ^ (uint32_t)getpid(); /* still differs per process */
    snprintf(app->id_prefix, sizeof(app->id_prefix), "%08x-", r);
}

/* An ID from a proxy is used as it is only if it is short and plainly printable. */
static int id_ok(const char *s, size_t len)
{
    if (len == 0 || len > 128)
        return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c <= ' ' || c >= 127 || c == '"' || c == '\\')
            return 0;
    }
    return 1;
}

canal_str_t canal_req_id(canal_req_t *req)
{
    if (req->id.base != NULL || !req->app->cfg.request_id)
        return req->id;
    canal_app_t *app = req->app;
    if (app->nproxies > 0) {
        ssize_t c = h2o_find_header_by_str(&req->h2o->headers, H2O_STRLIT("x-request-id"), -1);
        struct canal_addr peer;
        if (c != -1 && id_ok(req->h2o->headers.entries[c].value.base, req->h2o->headers.entries[c].value.len) &&
            peer_addr(req->h2o->conn, &peer) == 0 && canal__proxies_trust(app, &peer)) {
            req->id = (canal_str_t){req->h2o->headers.entries[c].value.base, req->h2o->headers.entries[c].value.len};
            return req->id;
        }
    }
    /* "prefix-worker-" is made once per worker; then only the counter is written, in hex,
     * from its last digit back */
    struct canal_worker *w = req->worker;
    if (w->id_prefix_len == 0)
        w->id_prefix_len = (size_t)snprintf(w->id_prefix, sizeof(w->id_prefix), "%s%zx-", app->id_prefix, w->index);
    uint64_t v = ++w->next_id;
    size_t digits = (size_t)(64 - __builtin_clzll(v) + 3) / 4; /* v >= 1 */
    char *buf = h2o_mem_alloc_pool(&req->h2o->pool, sizeof(w->id_prefix) + 16);
    memcpy(buf, w->id_prefix, sizeof(w->id_prefix));
    char *end = buf + w->id_prefix_len + digits, *p = end;
    do {
        *--p = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v != 0);
    req->id = (canal_str_t){buf, (size_t)(end - buf)};
    return req->id;
}
