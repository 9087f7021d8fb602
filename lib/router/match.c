/* SPDX-License-Identifier: MIT */
/*
 * Matching: split the raw path on '/', percent-decode each segment, then walk the tree
 * depth-first. At each node the literal child for the segment is tried first (binary search),
 * then the parameter children whose constraints accept the segment (constrained ones first,
 * the plain one last), then the catch-all children with the rest of the path. A branch that
 * fails deeper down is left and the next candidate tried (backtracking). Nodes carry a mask of
 * the methods that end at or below them, so branches that cannot answer are skipped.
 *
 * Nothing here allocates: the decoded path goes to the caller's scratch memory (or, when the
 * path has no '%', values point straight into the path) and the walk state lives on the stack.
 *
 * Before all that, the fast way for literal routes (canal_router_match()): the path is copied
 * into words and hashed in one pass (scan()), looked up in the table of all-literal paths
 * (table_match()) and, when its node has an endpoint of the request's method that omits
 * nothing, answered at once, without the walk's state (match_walk() sets that up, out of line,
 * only when the table cannot answer, and reuses the words).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strndup, strncasecmp, REG_STARTEND: also when built without the Makefile */
#endif
#include <string.h>
#include "router_internal.h"

struct mctx {
    const canal_router_t *r;
    uint64_t mask;    /* the methods sought */
    int collect;      /* 1: visit every match and gather its methods in allow */
    int mi;           /* not collecting: the method sought (mask is its bit) */
    uint64_t allow;
    const char *buf;  /* the decoded path, without its leading '/' */
    const char *folded; /* buf folded (case-insensitive routers), or NULL: fold per segment */
    size_t buflen;
    size_t nsegs;     /* segments in the path (boundaries kept for the first ones only) */
    size_t start[CANAL_ROUTER_MAX_SEGMENTS + 1], len[CANAL_ROUTER_MAX_SEGMENTS + 1];
    canal_str_t cap[CANAL_ROUTER_MAX_SEGMENTS];
    const struct endpoint *ep; /* the result */
    size_t depth;
    int via_catchall;
    canal_str_t rest;
};

/* An endpoint reached by leaving segments out is usable unless a catch-all it leaves out
 * refuses the empty value. */
static int omitted_ok(const struct endpoint *ep)
{
    const struct canal_route *rt = ep->route;
    for (size_t i = rt->nsegs - ep->omitted; i < rt->nsegs; i++) {
        const struct tseg *s = &rt->segs[i];
        if (s->kind == SEG_CATCHALL && rt->params[s->param].def == NULL &&
            !canal__constraints_ok(s->cons, s->ncons, (canal_str_t){"", 0}))
            return 0;
    }
    return 1;
}

/* The endpoint of n for the methods in mask: the one that leaves out the fewest segments, then
 * the first registered. With allow (collect mode), records every usable method there and
 * returns NULL. */
static const struct endpoint *pick(const struct node *n, uint64_t mask, uint64_t *allow)
{
    const struct endpoint *best = NULL;
    for (size_t i = 0; i < n->neps; i++) {
        const struct endpoint *ep = &n->eps[i];
        uint64_t bit = (uint64_t)1 << ep->mi;
        if (!(mask & bit) || (ep->omitted && !omitted_ok(ep)))
            continue;
        if (allow != NULL)
            *allow |= bit;
        else if (best == NULL || ep->omitted < best->omitted)
            best = ep;
    }
    return best;
}

/* pick() for one method, mi. Registration refuses a second endpoint of one method that omits
 * nothing at one node, so such an endpoint, when there is one, is pick()'s answer: the common
 * case costs a short loop. */
static inline const struct endpoint *pick_method(const struct node *n, int mi)
{
    for (uint32_t i = 0; i < n->neps; i++)
        if (n->eps[i].mi == mi && n->eps[i].omitted == 0)
            return &n->eps[i];
    uint64_t bit = (uint64_t)1 << mi;
    return (n->below & bit) ? pick(n, bit, NULL) : NULL; /* one that leaves segments out */
}

/* The endpoint of n the walk is after, or NULL; in collect mode, records methods and returns
 * NULL. */
static inline const struct endpoint *walk_pick(struct mctx *c, const struct node *n)
{
    return c->collect ? pick(n, c->mask, &c->allow) : pick_method(n, c->mi);
}

static int walk(struct mctx *c, const struct node *n, size_t depth)
{
    if (depth == c->nsegs) {
        if ((c->ep = walk_pick(c, n)) == NULL)
            return 0;
        c->depth = depth;
        c->via_catchall = 0;
        return 1;
    }
    canal_str_t seg = {c->buf + c->start[depth], c->len[depth]};
    if (n->nlits > 0) {
        /* fold the segment once (case-insensitive routers store folded keys), not per compare */
        char folded[128];
        const char *key = seg.base;
        int fold = 0;
        if (c->folded != NULL) {
            key = c->folded + c->start[depth];
        } else if (!c->r->opts.case_sensitive) {
            if (seg.len <= sizeof(folded)) {
                for (size_t i = 0; i < seg.len; i++)
                    folded[i] = (char)canal__lower((unsigned char)seg.base[i]);
                key = folded;
            } else {
                fold = 1;
            }
        }
        const struct node *child = canal__find_literal(c->r, n, key, seg.len, fold, NULL);
        if (child != NULL && (child->below & c->mask) && walk(c, child, depth + 1))
            return 1;
    }
    if (seg.len > 0) {
        for (size_t i = 0; i < n->nparams; i++) {
            const struct node *p = n->params[i];
            if (!(p->below & c->mask) || !canal__constraints_ok(p->cons, p->ncons, seg))
                continue;
            c->cap[depth] = seg;
            if (walk(c, p, depth + 1))
                return 1;
        }
    }
    for (size_t i = 0; i < n->ncatchalls; i++) {
        const struct node *ca = n->catchalls[i];
        canal_str_t rest = {seg.base, c->buflen - c->start[depth]};
        if (!(ca->below & c->mask) || !canal__constraints_ok(ca->cons, ca->ncons, rest))
            continue;
        if ((c->ep = walk_pick(c, ca)) != NULL) {
            c->depth = depth;
            c->via_catchall = 1;
            c->rest = rest;
            return 1;
        }
    }
    return 0;
}

static int try_method(struct mctx *c, int mi)
{
    if (mi < 0)
        return 0;
    c->mask = (uint64_t)1 << mi;
    c->mi = mi;
    c->collect = 0;
    if (!(c->r->root.below & c->mask))
        return 0;
    return walk(c, &c->r->root, 0);
}

/* The values of the route of ep, reached at depth segments: captures (cap) for the segments
 * walked, the rest of the path for a catch-all met at depth (rest, or NULL), defaults and
 * empty catch-alls for the segments left out. */
static void fill(const struct endpoint *ep, size_t depth, const canal_str_t *cap,
                 const canal_str_t *rest, canal_match_t *m)
{
    const struct canal_route *rt = ep->route;
    m->route = rt;
    m->index = rt->index;
    m->data = rt->data;
    m->nparams = 0;
    for (size_t i = 0; i < rt->nparams; i++) {
        const struct rparam *p = &rt->params[i];
        canal_str_t v;
        if (rest != NULL && p->seg == depth)
            v = *rest;
        else if (p->seg < depth)
            v = cap[p->seg];
        else if (p->def != NULL)
            v = (canal_str_t){p->def, strlen(p->def)};
        else if (rt->segs[p->seg].kind == SEG_CATCHALL)
            v = (canal_str_t){"", 0};
        else
            continue; /* an optional parameter left out */
        m->params[m->nparams].name = (canal_str_t){p->name, p->name_len};
        m->params[m->nparams++].value = v;
    }
}

/* The high bit of each zero byte of t (exact: no borrow between bytes). */
static inline uint64_t zero_bytes(uint64_t t)
{
    return ~(((t & 0x7f7f7f7f7f7f7f7fULL) + 0x7f7f7f7f7f7f7f7fULL) | t | 0x7f7f7f7f7f7f7f7fULL);
}

/* Nonzero when t has a zero byte, cheaper than zero_bytes(): a borrow may also flag bytes above
 * a zero byte, but never one below the first, so the lowest flag is exact. */
static inline uint64_t has_zero(uint64_t t)
{
    return (t - 0x0101010101010101ULL) & ~t & 0x8080808080808080ULL;
}

#define QMARKS 0x3f3f3f3f3f3f3f3fULL
#define PERCENTS 0x2525252525252525ULL
#define SLASHES 0x2f2f2f2f2f2f2f2fULL

/* The first look at the path after its leading '/', made for the path table and kept for the
 * walk when the table cannot answer, so that nothing is loaded twice. */
#define MI_UNKNOWN (-2) /* struct pscan.mi before anyone looked the method up */
struct pscan {
    int scanned;  /* 1: words and h hold the n bytes; 0: they do not fit (the walk splits) */
    int mi;       /* the request's method index (-1: none), once table_pick() looked it up */
    size_t n;     /* the length of the path after its '/' (before a '?' found so far) */
    uint64_t h;   /* the hash of words, as the table hashes its keys */
    uint64_t words[CANAL__PATH_WORDS]; /* the n bytes as little-endian words, zero-padded, as
                                        * they come (see canal__hash_step()) until segments()
                                        * folds them */
};

/* Copies the n bytes p[0..n) (n <= 8 * CANAL__PATH_WORDS) into s->words, 8 at a time, and
 * hashes them as the path table does its keys: the fast way's whole look at a path. It needs
 * no segment boundaries, no folding (the table's hash is blind to case), and no check for '%',
 * '?' or NUL either, since no key holds one (path_add() in tree.c): a path with one misses the
 * table, and the walk looks for them and the boundaries (segments()). A path with a query
 * (a '?') so misses first, and the walk tries the table again without the query. */
static inline void scan(struct pscan *s, const char *p, size_t n)
{
    uint64_t h = CANAL__HASH_SEED;
    size_t i = 0;
    for (; 8 * i + 8 <= n; i++) {
        s->words[i] = canal__load64_le(p + 8 * i);
        h = canal__hash_step(h, s->words[i]);
    }
    if (n % 8 != 0) {
        /* the last bytes: when the path is that long, one load that ends at its end, with the
         * bytes already taken shifted out; else loads that stay inside it */
        s->words[i] = n >= 8 ? canal__load64_le(p + n - 8) >> (64 - 8 * (n % 8))
                             : canal__load_le(p, n);
        h = canal__hash_step(h, s->words[i]);
    }
    s->n = n;
    s->h = h;
}

/* The hash of s->words, again, after segments() cut the path at a '?'. */
static void rehash(struct pscan *s)
{
    uint64_t h = CANAL__HASH_SEED;
    for (size_t i = 0; 8 * i < s->n; i++)
        h = canal__hash_step(h, s->words[i]);
    s->h = h;
}

/* Splits (and decodes) the path after its leading '/'. Returns 0 or 400. */
static int split(struct mctx *c, const char *p, const char *end, char *scratch)
{
    size_t seg = 0, n = (size_t)(end - p), i;
    c->start[0] = 0;
    /* One pass for the common case: no escapes, so segments point into the path itself. A raw
     * NUL is refused like %00: values must be safe to use as C strings, or "/f/a.txt<NUL>.png"
     * would reach a handler as "a.txt" after a check on ".png". */
    for (i = 0; i < n; i++) {
        char ch = p[i];
        if (ch == '/') {
            if (seg < CANAL_ROUTER_MAX_SEGMENTS)
                c->len[seg] = i - c->start[seg], c->start[seg + 1] = i + 1;
            else if (seg == CANAL_ROUTER_MAX_SEGMENTS) /* the last one kept: walk reads it */
                c->len[seg] = i - c->start[seg];
            seg++;
        } else if (ch == '%' || ch == '\0') {
            break;
        }
    }
    if (i == n) {
        c->buf = p;
        c->buflen = n;
    } else {
        size_t o = 0;
        if (memchr(p, '\0', n) != NULL)
            return 400;
        seg = 0;
        while (p < end) {
            char ch = *p++;
            if (ch == '/') {
                if (seg < CANAL_ROUTER_MAX_SEGMENTS)
                    c->len[seg] = o - c->start[seg], c->start[seg + 1] = o + 1;
                else if (seg == CANAL_ROUTER_MAX_SEGMENTS)
                    c->len[seg] = o - c->start[seg];
                seg++;
            } else if (ch == '%') {
                int hi, lo;
                if (end - p < 2 || (hi = canal__hexval((unsigned char)p[0])) < 0 ||
                    (lo = canal__hexval((unsigned char)p[1])) < 0 || (hi | lo) == 0)
                    return 400;
                ch = (char)(hi << 4 | lo);
                p += 2;
            }
            scratch[o++] = ch;
        }
        c->buf = scratch;
        c->buflen = o;
    }
    if (seg <= CANAL_ROUTER_MAX_SEGMENTS)
        c->len[seg] = c->buflen - c->start[seg];
    c->nsegs = seg + 1;
    return 0;
}

/* Notes the '/' of word i (x) as segment boundaries, as split() does. */
static inline void word_slashes(struct mctx *c, size_t i, uint64_t x, size_t *seg)
{
    for (uint64_t slash = zero_bytes(x ^ SLASHES); slash; slash &= slash - 1) {
        size_t at = 8 * i + ((size_t)__builtin_ctzll(slash) >> 3);
        if (*seg < CANAL_ROUTER_MAX_SEGMENTS)
            c->len[*seg] = at - c->start[*seg], c->start[*seg + 1] = at + 1;
        else if (*seg == CANAL_ROUTER_MAX_SEGMENTS) /* the last one kept: walk reads it */
            c->len[*seg] = at - c->start[*seg];
        (*seg)++;
    }
}

/* Segment boundaries for the walk of a scanned path, from its words (a '/' is the same folded
 * or not), as split() would note them; folds the words for a case-insensitive router (fold),
 * for the walk's literal compares and for the table. A '?' ends the path: s->n becomes its
 * position and the words stop there (zero-padded). Returns 0; or 1, with *bad_at the position
 * of a '%' or NUL before any '?', when split() must decode the path. */
static int segments(struct mctx *c, const char *p, struct pscan *s, int fold, size_t *bad_at)
{
    size_t n = s->n, seg = 0, i = 0;
    uint64_t x, bad;
    c->start[0] = 0;
    for (; 8 * i + 8 <= n; i++) {
        x = s->words[i];
        if ((bad = has_zero(x ^ PERCENTS) | has_zero(x ^ QMARKS) | has_zero(x)) != 0)
            goto special;
        if (fold)
            s->words[i] = canal__lower8(x);
        word_slashes(c, i, x, &seg);
    }
    if (n % 8 != 0) { /* the last word: its zero padding is no NUL */
        x = s->words[i];
        uint64_t pad = ~(uint64_t)0 << (8 * (n % 8));
        if ((bad = has_zero(x ^ PERCENTS) | has_zero(x ^ QMARKS) | has_zero(x | pad)) != 0)
            goto special;
        if (fold)
            s->words[i] = canal__lower8(x);
        word_slashes(c, i, x, &seg);
    }
done:
    if (seg <= CANAL_ROUTER_MAX_SEGMENTS)
        c->len[seg] = n - c->start[seg];
    c->nsegs = seg + 1;
    c->buf = p;
    c->buflen = n;
    return 0;
special: { /* the lowest flag is exact (see has_zero()) */
    size_t k = (size_t)__builtin_ctzll(bad) >> 3;
    if (p[8 * i + k] != '?') {
        *bad_at = 8 * i + k;
        return 1;
    }
    n = s->n = 8 * i + k; /* the query starts here: keep the bytes before it */
    if (k > 0) {
        x &= ((uint64_t)1 << (8 * k)) - 1;
        s->words[i] = fold ? canal__lower8(x) : x;
        word_slashes(c, i, x, &seg);
    }
    goto done;
}
}

static void fill_table(const struct endpoint *ep, canal_match_t *m);
static inline __attribute__((always_inline)) const struct endpoint *
table_match(const canal_router_t *r, canal_str_t method, const char *p, struct pscan *s);

/* The matcher's slow way: decode and split the path, then walk the tree (and, when nothing
 * answers, walk it again to collect the methods that would). Kept out of line so that the fast
 * way in canal_router_match() does not pay for its ~1 KB of state. */
static __attribute__((noinline)) int match_walk(const canal_router_t *r, canal_str_t method,
                                                canal_str_t path, struct pscan *s, char *scratch,
                                                canal_match_t *m)
{
    struct mctx c;
    const char *p = path.base + 1, *end;
    int fold = !r->opts.case_sensitive;
    size_t bad_at = 0;
    c.r = r;
    c.allow = 0;
    c.folded = NULL;
    if (s->scanned && segments(&c, p, s, fold, &bad_at) == 0) {
        end = p + s->n;
        if (end != path.base + path.len) { /* a query, cut off: the table may know the rest */
            const struct endpoint *ep;
            rehash(s);
            if (r->npaths > 0 && (ep = table_match(r, method, p, s)) != NULL) {
                fill_table(ep, m);
                return 200;
            }
        }
        if (end == p) /* "/" has no segment */
            c.nsegs = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (fold) /* the words' bytes are the path's, folded */
            c.folded = (const char *)s->words;
#endif
    } else {
        end = p + s->n; /* too long for the words: s->n is the length before the '?' */
        if (s->scanned) { /* a '%' or a NUL at bad_at, with no '?' before it */
            const char *q = memchr(p + bad_at, '?', s->n - bad_at);
            if (q != NULL)
                end = q;
        }
        if (split(&c, p, end, scratch) != 0)
            return 400;
    }
    int mi = s->mi != MI_UNKNOWN ? s->mi : canal__method_index(r, method), fallback = -1;
    if (!r->opts.no_head_from_get && method.len == 4 && memcmp(method.base, "HEAD", 4) == 0)
        fallback = canal__method_index(r, (canal_str_t){"GET", 3});

    /* a trailing '/' (an empty last segment) */
    int trailing = c.nsegs > 0 && end[-1] == '/';
    if (trailing && r->opts.trailing_slash == CANAL_SLASH_IGNORE) {
        c.nsegs--;
        c.buflen = c.buflen > 0 ? c.buflen - 1 : 0;
    }

    if (try_method(&c, mi) || try_method(&c, fallback)) {
        fill(c.ep, c.depth, c.cap, c.via_catchall ? &c.rest : NULL, m);
        return 200;
    }
    if (trailing && r->opts.trailing_slash == CANAL_SLASH_REDIRECT) {
        c.nsegs--;
        c.buflen--;
        if (try_method(&c, mi) || try_method(&c, fallback)) {
            m->location = (canal_str_t){path.base, (size_t)(end - path.base) - 1};
            return 308;
        }
        c.nsegs++;
        c.buflen++;
    }
    c.mask = ~(uint64_t)0;
    c.collect = 1;
    walk(&c, &r->root, 0);
    m->allow = c.allow;
    if (c.allow == 0)
        return 404;
    if (!r->opts.no_auto_options && method.len == 7 && memcmp(method.base, "OPTIONS", 7) == 0)
        return 204;
    return 405;
}

/* The rest of table_match(): endpoints that leave segments out, a method of more than 8 bytes,
 * HEAD answered by GET. Out of line: rare. */
static __attribute__((noinline)) const struct endpoint *table_pick(const canal_router_t *r,
                                                                   const struct node *n,
                                                                   canal_str_t method,
                                                                   struct pscan *s)
{
    int mi = s->mi = canal__method_index(r, method); /* for the walk, if it comes to that */
    if (mi < 0) {
        if (r->opts.no_head_from_get || method.len != 4 || memcmp(method.base, "HEAD", 4) != 0 ||
            (mi = canal__method_index(r, (canal_str_t){"GET", 3})) < 0)
            return NULL;
    }
    return pick_method(n, mi);
}

/* The common case at a literal path's node: an endpoint of the request's method that omits
 * nothing, found by the method's name (its word) with no method index; there is at most one
 * (pick_method()). NULL when there is none, or the name is longer than a word. */
static inline const struct endpoint *endpoint_by_word(const struct node *n, canal_str_t method)
{
    if (method.len > 8)
        return NULL;
    uint64_t w = method.len == 3 ? canal__load3_le(method.base) /* GET */
                                 : canal__load_le(method.base, method.len);
    for (uint32_t i = 0; i < n->neps; i++) /* the length matches and nothing is omitted */
        if (n->eps[i].mword == w && ((uint32_t)n->eps[i].omitted << 16 | n->eps[i].mlen) == method.len)
            return &n->eps[i];
    return NULL;
}

/* The fast way for literal routes: the endpoint the walk would find for a scanned path in the
 * table of all-literal paths, or NULL to take the walk. A path of literals only: the walk would
 * follow literal children all the way down (they come first at every level) and answer with
 * that node's endpoint if it has one; only when it has none must the walk look further. So one
 * probe, and the node's endpoint for the request's own method (a HEAD route anywhere beats the
 * GET fallback, so that falls back only when the router has no HEAD route at all). A path with
 * an escape or a NUL misses (no key has one), as it must: decoded, a %2F is no separator. The
 * table holds no path with an empty segment: "//" (trimmed to "") is not the root. */
static inline __attribute__((always_inline)) const struct endpoint *
table_match(const canal_router_t *r, canal_str_t method, const char *p, struct pscan *s)
{
    const struct node *n;
    if (s->n > 0 && p[s->n - 1] == '/') {
        /* redirect: the walk decides; strict: "a/" has an empty segment, so it is not here */
        if (r->opts.trailing_slash != CANAL_SLASH_IGNORE || s->n == 1)
            return NULL;
        n = canal__path_lookup(r, p, s->n - 1);
    } else {
        n = canal__path_probe(r, s->words, s->n, s->h);
    }
    if (n == NULL)
        return NULL;
    const struct endpoint *ep = endpoint_by_word(n, method);
    return ep != NULL ? ep : table_pick(r, n, method, s);
}

/* The match of an endpoint from the table: every segment up to its node is a literal, so the
 * route's values are the defaults (or empty catch-alls) of the segments it leaves out. */
static inline void fill_table(const struct endpoint *ep, canal_match_t *m)
{
    const struct canal_route *rt = ep->route;
    if (rt->nparams == 0) {
        m->route = rt;
        m->index = rt->index;
        m->data = rt->data;
        m->nparams = 0;
    } else {
        fill(ep, rt->nsegs - ep->omitted, NULL, NULL, m); /* no captures (cap) to read */
    }
}

/* The whole match when the fast way in canal_router_match() does not answer. */
static __attribute__((noinline)) int match_full(const canal_router_t *r, canal_str_t method,
                                                canal_str_t path, char *scratch,
                                                size_t scratch_size, canal_match_t *m)
{
    struct pscan s;
    if (scratch_size < path.len)
        return CANAL_EINVAL;
    if (path.len == 0 || path.base[0] != '/')
        return 400;
    const char *p = path.base + 1;
    size_t n = path.len - 1;
    if (n > sizeof(s.words)) { /* the path before the query may fit */
        const char *q = memchr(p, '?', n);
        if (q != NULL)
            n = (size_t)(q - p);
    }
    s.scanned = n <= sizeof(s.words);
    s.n = n;
    s.mi = MI_UNKNOWN;
    if (s.scanned) {
        const struct endpoint *ep;
        scan(&s, p, n);
        if (r->npaths > 0 && (ep = table_match(r, method, p, &s)) != NULL) {
            fill_table(ep, m);
            return 200;
        }
    }
    return match_walk(r, method, path, &s, scratch, m);
}

/* The fastest way, for the usual request to a short literal route: a path of at most 16 bytes
 * after its '/', held in two words in registers, hashed as scan() does, found in the first slot
 * of its hash as it comes (no folding), and the endpoint_by_word() of the request's method.
 * Anything else (a trailing '/', a collision, another case than the key's, a '%', another
 * method) is left to match_full(), which starts over: a miss here costs a few dozen
 * instructions more, a hit spares scan()'s frame. */
static inline __attribute__((always_inline)) const struct endpoint *
short_match(const canal_router_t *r, canal_str_t method, const char *p, size_t n)
{
    uint64_t w0, w1 = 0, h;
    if (n > 8) {
        w0 = canal__load64_le(p);
        w1 = canal__load64_le(p + n - 8) >> (128 - 8 * n); /* the bytes after the first 8 */
        h = canal__hash_step(canal__hash_step(CANAL__HASH_SEED, w0), w1);
    } else {
        w0 = canal__load_le(p, n);
        h = canal__hash_step(CANAL__HASH_SEED, w0);
    }
    if (p[n - 1] == '/')
        return NULL;
    const struct lit_path *lp = &r->paths[canal__path_slot(h, r->paths_shift)];
    if (lp->hash != h || lp->len != n || canal__load64_le(lp->key) != w0 ||
        (n > 8 && canal__load64_le(lp->key + 8) != w1))
        return NULL;
    return endpoint_by_word(lp->node, method);
}

int canal_router_match(const canal_router_t *r, canal_str_t method, canal_str_t path, char *scratch,
                       size_t scratch_size, canal_match_t *m)
{
    const struct endpoint *ep;
    if (path.len - 2 < 16 && scratch_size >= path.len && path.base[0] == '/' && r->npaths > 0 &&
        (ep = short_match(r, method, path.base + 1, path.len - 1)) != NULL) {
        fill_table(ep, m);
        return 200;
    }
    return match_full(r, method, path, scratch, scratch_size, m);
}

const canal_str_t *canal_match_get(const canal_match_t *m, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < m->nparams; i++)
        if (m->params[i].name.len == n && memcmp(m->params[i].name.base, name, n) == 0)
            return &m->params[i].value;
    return NULL;
}
