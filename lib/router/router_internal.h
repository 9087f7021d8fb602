/* SPDX-License-Identifier: MIT */
/*
 * The router's private structures, shared by its files:
 *   template.c  parses a template into segments and constraints, checks constraint values
 *   tree.c      the router object, registration into the segment tree, groups, listings
 *   match.c     decoding a path and walking the tree
 *   link.c      link generation
 *   values.c    the strict value parsers and percent-decoding of the public API
 *
 * A route's template becomes an array of segments. The tree has one node per distinct
 * segment prefix: literal children (sorted, for binary search), parameter children (nodes keyed
 * by their constraint text, so {id} and {name} at the same place share a node; constrained
 * first, in registration order, the plain one last) and catch-all children (likewise). Each node
 * keeps the endpoints (route + method) that end there, and a mask of the methods that end at or
 * below it, so the matcher skips branches that cannot answer the request's method.
 */
#ifndef CANAL_ROUTER_INTERNAL_H
#define CANAL_ROUTER_INTERNAL_H

#include <regex.h>
#include <stdint.h>
#include <string.h>
#include "canal/router.h"

enum { SEG_LITERAL, SEG_PARAM, SEG_CATCHALL };

enum {
    CONS_INT, CONS_LONG, CONS_BOOL, CONS_DOUBLE, CONS_GUID, CONS_ALPHA, CONS_MIN, CONS_MAX,
    CONS_RANGE, CONS_LENGTH, CONS_MINLENGTH, CONS_MAXLENGTH, CONS_REGEX, CONS_UTF8
};

struct constraint {
    int type;
    int64_t a, b;
    regex_t *re;
    char *re_text; /* the regex as written, for canal_route_param_constraint() */
};

struct tseg {
    int kind;
    char *text;    /* literal: unescaped text; parameter: canonical constraint text ("" plain) */
    size_t len;
    size_t pos;    /* byte offset of the segment in the template, for error positions */
    int param;     /* parameters: index into route->params */
    struct constraint *cons;
    size_t ncons;
};

struct rparam {
    char *name;
    char *def;        /* default value, or NULL */
    uint32_t name_len;
    uint16_t seg;     /* index of its segment */
    uint8_t optional; /* {x?} */
    uint8_t keep_slash; /* {**x}: link generation keeps '/' */
};

/* The fields a match reads (fill() in match.c) come first, so that a matched route costs as
 * few cache lines as it can. */
struct canal_route {
    void *data;
    size_t nparams;
    struct rparam params[CANAL_ROUTER_MAX_PARAMS];
    struct tseg *segs;
    size_t nsegs;
    size_t first_omittable; /* segments from this index on may all be left out */
    char *method;
    int mi;           /* method index in the router */
    char *tmpl;       /* as registered */
    char *name;
    void (*dispose)(void *);
    size_t index;     /* registration order */
    struct canal_route *next_dead; /* see canal_router.dead */
};

struct endpoint {
    /* the route's method as canal_router_t.method_words and .method_lens have it, so that the
     * matcher's fast way compares the request's method here and needs no method index */
    uint64_t mword;
    const struct canal_route *route;
    int mi;           /* the route's method index, kept here to spare a read of the route */
    uint16_t mlen;
    uint16_t omitted; /* number of trailing template segments left out to end here */
};

/* A literal child, with its key (when short) beside the pointer, so that a binary search
 * reads one array and not a node and a string per comparison; 32 bytes, two to a cache line.
 * Longer keys are read from the child. */
#define CANAL__LIT_INLINE 20
struct lit {
    uint32_t len;
    char inl[CANAL__LIT_INLINE]; /* the key if len <= CANAL__LIT_INLINE */
    struct node *child;
};

/* A node's first 64 bytes hold all that the matcher reads on its way through (nodes are carved
 * from 64-byte aligned slabs, see tree.c); the rest is for registration and listings. The
 * constraints of a parameter node are copied here from its segment to spare a read of the
 * route that made it. */
struct node {
    uint64_t below;         /* methods with an endpoint here or below */
    struct lit *lits;
    struct node **params;
    struct endpoint *eps;
    const struct constraint *cons;
    uint32_t nlits, nparams, ncatchalls, neps;
    uint32_t ncons;
    struct node **catchalls;
    const struct tseg *seg; /* the segment that made this node (NULL for the root) */
    char *key;              /* literal: folded per the case policy; parameter: constraint text */
    size_t keylen;
    size_t depth;           /* segments from the root to here */
};

/* The nodes reached by all-literal paths, by their folded path ("a/b"), so a request for a
 * literal route is one hash probe instead of a walk (match.c checks it gives the same answer). */
struct lit_path {
    uint64_t hash;
    char *key;
    size_t len;
    struct node *node;
};

struct canal_route_group {
    struct canal_route_group *next;
    canal_router_t *router;
    char *prefix;
};

struct canal_router {
    canal_router_options_t opts;
    struct node root;
    struct canal_route **routes;
    size_t nroutes;
    char *methods[CANAL_ROUTER_MAX_METHODS];
    size_t method_lens[CANAL_ROUTER_MAX_METHODS];
    uint64_t method_words[CANAL_ROUTER_MAX_METHODS]; /* names of up to 8 bytes, zero-padded */
    size_t nmethods;
    struct canal_route_group *groups;
    /* Routes whose registration ran out of memory after creating tree nodes: the nodes point
     * at their segments, so they live until the router is destroyed. */
    struct canal_route *dead;
    struct node_slab *slabs;     /* where the nodes below the root live (tree.c) */
    size_t slab_used;            /* nodes handed out from the first slab */
    struct lit_path *paths;      /* open addressing, a power of two long */
    size_t npaths, paths_cap;
    unsigned paths_shift;        /* 64 - log2(paths_cap): a hash's slot is its top bits */
};

/* template.c */
int canal__template_parse(struct canal_route *route, const char *tmpl, int strict_slash,
                          canal_error_info_t *err);
void canal__route_free_segments(struct canal_route *route);
int canal__constraints_ok(const struct constraint *cons, size_t ncons, canal_str_t value);

/* tree.c */
/* s must already be folded (case-insensitive routers) unless fold is 1 */
struct node *canal__find_literal(const canal_router_t *r, const struct node *n, const char *s,
                                 size_t len, int fold, size_t *at);

/* tree.c: the all-literal path table. Keys are stored folded for case-insensitive routers and
 * zero-padded to whole words, and hashed 8 bytes at a time as little-endian words; paths longer
 * than CANAL__PATH_WORDS words are never looked up (the walk finds them). */
#define CANAL__PATH_WORDS 32
static inline uint32_t canal__le32(uint32_t x)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap32(x);
#else
    return x;
#endif
}
/* The hash starts from a constant, not from the length: a path's words alone tell paths apart
 * (paths and keys hold no NUL, so zero padding is never part of one). A probe still compares
 * lengths. It is a multiplicative hash, one multiply a word: the top bits of a product depend on
 * every bit of the word and of the hash before it, so a slot is taken from the top bits
 * (canal__path_slot()), and no mixing is needed between words. */
#define CANAL__HASH_SEED 0x9E3779B97F4A7C15ULL
/* The hash is blind to ASCII case: each word is hashed with the 0x20 bit of its every byte set,
 * which takes 'A'..'Z' to 'a'..'z' (and a few other pairs, such as '@' and '`', to one another:
 * a weaker hash, not a wrong one). So a case-insensitive router hashes a path as it comes and
 * folds it only to compare it with a key (canal__path_probe()), where a path already in lower
 * case, the usual one, needs no folding at all. */
#define CANAL__CASE_BITS 0x2020202020202020ULL
static inline uint64_t canal__hash_step(uint64_t h, uint64_t word)
{
    return (h ^ (word | CANAL__CASE_BITS)) * 0xff51afd7ed558ccdULL;
}
/* The slot of hash h in a table of 2^(64 - shift) slots. */
static inline size_t canal__path_slot(uint64_t h, unsigned shift)
{
    return (size_t)(h >> shift);
}
static inline uint64_t canal__le64(uint64_t x)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return __builtin_bswap64(x);
#else
    return x;
#endif
}
/* 8 bytes at s as a little-endian word: the first byte is the lowest. */
static inline uint64_t canal__load64_le(const char *s)
{
    uint64_t x;
    memcpy(&x, s, 8);
    return canal__le64(x);
}
/* Bytes s[0..len) (len <= 8) as a little-endian word, zero-padded above, by loads that read
 * nothing outside them (two overlapping ones when len is not 1, 2, 4 or 8). */
static inline uint64_t canal__load_le(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    uint32_t a, b;
    if (len >= 4) {
        memcpy(&a, s, 4);
        memcpy(&b, s + len - 4, 4);
        a = canal__le32(a), b = canal__le32(b);
        return (uint64_t)a | (uint64_t)b << (8 * (len - 4));
    }
    if (len == 0)
        return 0;
    return (uint64_t)u[0] | (uint64_t)u[len / 2] << (8 * (len / 2)) | (uint64_t)u[len - 1] << (8 * (len - 1));
}
/* Bytes s[0..3) as a little-endian word (the length of GET and PUT): a 2-byte and a 1-byte load. */
static inline uint64_t canal__load3_le(const char *s)
{
    uint16_t a;
    memcpy(&a, s, 2);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    a = __builtin_bswap16(a);
#endif
    return (uint64_t)a | (uint64_t)(unsigned char)s[2] << 16;
}
/* ASCII letters of 8 bytes at once to lower case (SWAR): a byte gets 0x20 when it is in
 * 'A'..'Z'; the high bit of each byte of the sums says ">= 'A'" and "> 'Z'". */
static inline uint64_t canal__lower8(uint64_t x)
{
    uint64_t low7 = x & 0x7f7f7f7f7f7f7f7fULL;
    uint64_t ge_a = low7 + 0x3f3f3f3f3f3f3f3fULL, gt_z = low7 + 0x2525252525252525ULL;
    uint64_t upper = ~x & (ge_a ^ gt_z) & 0x8080808080808080ULL;
    return x | (upper >> 2);
}
/* The node of the all-literal path in words (len bytes as little-endian words, zero-padded,
 * not folded; hash h), or NULL. The table must not be empty (r->npaths > 0). A case-insensitive
 * router compares a word as it is first and folds it only if that fails. */
struct node *canal__path_probe_all(const canal_router_t *r, const uint64_t *words, size_t len,
                                   uint64_t h);
/* The same, inline for the matcher's fast path: the first slot, compared as it is, and
 * canal__path_probe_all() for anything else (a collision, a path in another case than its
 * key), so that the inline part makes no call it must come back from. */
static inline struct node *canal__path_probe(const canal_router_t *r, const uint64_t *words,
                                             size_t len, uint64_t h)
{
    const struct lit_path *p = &r->paths[canal__path_slot(h, r->paths_shift)];
    if (p->hash == h && p->len == len) { /* an empty slot passes only for len 0: no read */
        size_t nw = (len + 7) / 8, k = 0;
        while (k < nw && canal__load64_le(p->key + 8 * k) == words[k])
            k++;
        if (k == nw)
            return p->node;
    } else if (p->key == NULL) { /* the usual miss: an empty slot */
        return NULL;
    }
    return canal__path_probe_all(r, words, len, h);
}
/* The same from a plain string. */
struct node *canal__path_lookup(const canal_router_t *r, const char *s, size_t len);

/* The index of a method name in the router, or -1. Inline: every match starts with it. Names
 * of up to 8 bytes are one word compare each (zero-padded words; the lengths are compared too,
 * since a request's method may hold a NUL). Longer ones compare lengths first: the request's
 * method may be longer than a stored name, and memcmp must not read past the stored name's
 * NUL. */
static inline int canal__method_index(const canal_router_t *r, canal_str_t method)
{
    if (method.len <= 8) {
        uint64_t w = method.len == 3 ? canal__load3_le(method.base) /* GET */
                                     : canal__load_le(method.base, method.len);
        for (size_t i = 0; i < r->nmethods; i++)
            if (r->method_words[i] == w && r->method_lens[i] == method.len)
                return (int)i;
        return -1;
    }
    for (size_t i = 0; i < r->nmethods; i++)
        if (r->method_lens[i] == method.len && memcmp(r->methods[i], method.base, method.len) == 0)
            return (int)i;
    return -1;
}

/* shared helpers */
int canal__hexval(unsigned char c); /* 0-15, or -1 */
int canal__error(canal_error_info_t *err, int code, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static inline unsigned char canal__lower(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

#endif
