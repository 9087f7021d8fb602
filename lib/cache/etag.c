/* SPDX-License-Identifier: MIT */
/*
 * ETags for dynamic answers (canal/etag.h): a head at the commit (core/feature.h). At start,
 * every route whose setting (its own CANAL_ETAG(), its groups', the app's: one resolver,
 * canal__scope_get()) is on gets the head. At the commit, the head hashes the body set on the
 * request (a 2xx answer to GET or HEAD, not a stream), adds the ETag and, when If-None-Match
 * matches it, turns the answer into a 304 with no body: the core reads the status again after
 * the heads. The hash reads 8 bytes a step (multiply and xor-shift, the length folded in):
 * not cryptographic, a validator of the answer's own bytes.
 */
#include <string.h>
#include "core/core.h"
#include "core/feature.h"
#include "canal/etag.h"

static const struct canal__feature feature;

#define ON ((const void *)(uintptr_t)1)
#define OFF ((const void *)(uintptr_t)2)

static int option_attach(canal_app_t *app, const void *value, const void **kept, canal_error_info_t *err)
{
    if (value != ON && value != OFF)
        return canal_error_set(err, CANAL_EINVAL, 0, "an ETag option is CANAL_ETAG(0) or CANAL_ETAG(1)");
    *kept = value;
    return 0;
}
const canal_option_kind_t canal_etag_option = {&feature, "etag", option_attach, NULL};

int canal_app_etag(canal_app_t *app, const canal_route_group_t *group, int on)
{
    if (app == NULL)
        return CANAL_EINVAL;
    if (canal__feature_on(app, &feature) == NULL)
        return canal__reg_fail(app, NULL, atomic_load(&app->state) != APP_CREATED ? CANAL_ESTATE : CANAL_ENOMEM,
                               "ETags: %s", atomic_load(&app->state) != APP_CREATED ? "the app has started" : "out of memory");
    int rc = canal__scope_set(app, &canal_etag_option, group, on ? ON : OFF);
    return rc != 0 ? canal__reg_fail(app, NULL, rc, "ETags: %s", canal_strerror(rc)) : 0;
}

static uint64_t hash(const unsigned char *p, size_t len)
{
    const uint64_t k = 0x9E3779B97F4A7C15ULL;
    uint64_t h = 0x2545F4914F6CDD1DULL ^ (len * k);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * k;
        h ^= h >> 29;
    }
    uint64_t w = 0;
    memcpy(&w, p + i, len - i);
    h = (h ^ w) * k;
    h ^= h >> 32;
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 31);
}

/* Skips optional whitespace and commas */
static const char *skip(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
        p++;
    return p;
}

/* Whether the If-None-Match list s holds "*" or tag (18 bytes with its quotes), by the weak
 * comparison: W/ prefixes are ignored (RFC 9110 8.8.3.2). An element that is not an
 * entity-tag ends the scan (a malformed field matches nothing). */
static int list_matches(const char *s, size_t len, const char *tag)
{
    const char *p = s, *end = s + len;
    for (p = skip(p, end); p < end; p = skip(p, end)) {
        if (*p == '*')
            return 1;
        if (end - p >= 2 && p[0] == 'W' && p[1] == '/')
            p += 2;
        if (p >= end || *p != '"')
            return 0;
        const char *close = memchr(p + 1, '"', (size_t)(end - p - 1));
        if (close == NULL)
            return 0;
        if (close - p + 1 == 18 && memcmp(p, tag, 18) == 0)
            return 1;
        p = close + 1;
    }
    return 0;
}

static void etag_head(canal_req_t *req, h2o_req_t *h, const void *arg)
{
    if (req == NULL || req->stream != NULL || req->res.status < 200 || req->res.status > 299 ||
        req->res.status == 204 || (req->res.body == NULL && req->res.len > 0))
        return;
    if (!h2o_memis(h->method.base, h->method.len, H2O_STRLIT("GET")) &&
        !h2o_memis(h->method.base, h->method.len, H2O_STRLIT("HEAD")))
        return;
    static const char hex[] = "0123456789abcdef";
    char *tag = h2o_mem_alloc_pool(&h->pool, 18);
    uint64_t v = hash(req->res.body, req->res.len);
    tag[0] = tag[17] = '"';
    for (int i = 0; i < 16; i++)
        tag[16 - i] = hex[(v >> (4 * i)) & 15];
    h2o_add_header(&h->pool, &h->res.headers, H2O_TOKEN_ETAG, NULL, tag, 18);
    h->compress_hint = H2O_COMPRESS_HINT_DISABLE;
    for (ssize_t i = -1; (i = h2o_find_header(&h->headers, H2O_TOKEN_IF_NONE_MATCH, i)) != -1;) {
        const h2o_iovec_t *f = &h->headers.entries[i].value;
        if (list_matches(f->base, f->len, tag)) {
            req->res.status = 304;
            h->res.status = 304;
            h->res.reason = "Not Modified";
            return;
        }
    }
}

static int etag_start(canal_app_t *app, void *st)
{
    for (size_t i = 0; i < app->nendpoints; i++) {
        struct canal_endpoint *ep = &app->endpoints[i];
        if (canal__scope_get(app, &canal_etag_option, ep, canal__endpoint_option(ep, &canal_etag_option)) == ON &&
            canal__endpoint_head(ep, etag_head, NULL) != 0) {
            canal__log(app, CANAL_LOG_ERROR, "route %zu: too many heads", i);
            return -1;
        }
    }
    return 0;
}

static const struct canal__feature feature = {
    .name = "etag",
    .size = 1,
    .start = etag_start,
};
