/* SPDX-License-Identifier: MIT */
/*
 * The router's private structures, shared by its files:
 *   template.c  parses a template into segments and constraints, checks constraint values
 *   tree.c      the router object, registration into the segment tree, groups, listings
 *   paths.c     the table of literal paths, asked before the walk
 *   match.c     splitting and decoding a path, and walking the tree
 *   link.c      link generation
 *   values.c    the strict value parsers and percent-decoding of the public API
 *   regex.c     regex(...) constraints (PCRE2) and their translation to ECMA-262
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

#include <stdint.h>
#include <string.h>
#include "canal/router.h"

enum { SEG_LITERAL, SEG_PARAM, SEG_CATCHALL, SEG_COMPLEX };

enum {
    CONS_INT, CONS_LONG, CONS_BOOL, CONS_DOUBLE, CONS_GUID, CONS_ALPHA, CONS_MIN, CONS_MAX,
    CONS_RANGE, CONS_LENGTH, CONS_MINLENGTH, CONS_MAXLENGTH, CONS_REGEX, CONS_UTF8
};

struct pcre2_real_code_8;          /* pcre2_code, from <pcre2.h> (regex.c) */
struct pcre2_real_match_context_8; /* pcre2_match_context */

struct constraint {
    int type;
    int64_t a, b;
    struct pcre2_real_code_8 *re;              /* regex: compiled, shared by all threads */
    struct pcre2_real_match_context_8 *mctx;   /* regex: its match limit, read-only */
    int jit;                                   /* regex: re was JIT-compiled */
    char *re_text; /* the regex as written, for canal_route_param_constraint() */
    char *ecma;    /* the regex as ECMA-262 (RegExp "u"), for OpenAPI's pattern */
};

/* A template segment. A complex segment ({name}.{ext}) is a list of parts, each a literal or
 * a parameter segment of its own; a segment of one part is that part. */
struct tseg {
    int kind;
    char *text;    /* literal: unescaped text; parameter: canonical constraint text ("" plain);
                    * complex: the node key made of its parts (template.c) */
    size_t len;
    size_t pos;    /* byte offset of the segment in the template, for error positions */
    int param;     /* parameters: index into route->params; complex: its first parameter */
    int optional;  /* a part: an optional parameter ({x?}) */
    struct constraint *cons;
    size_t ncons;
    struct tseg *parts; /* complex: literal and parameter parts, in template order */
    size_t nparts;
    char *raw;     /* complex: the segment as written in the template */
};

struct rparam {
    char *name;
    char *def;        /* default value, or NULL */
    uint32_t name_len;
    uint16_t seg;     /* index of its segment */
    uint8_t optional; /* {x?} */
    uint8_t keep_slash; /* {**x}: link generation keeps '/' */
    uint8_t complex;  /* its segment is complex; part: its index among the segment's parts */
    uint8_t part;
    const struct constraint *cons; /* its constraints (owned by its segment or part) */
    size_t ncons;
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

/* A route as a node of the tree holds it: one per method that ends there (the router's own;
 * the server's endpoint table is struct canal_endpoint, by route number). */
struct node_route {
    const struct canal_route *route;
    int mi;           /* the route's method index, kept here to spare a read of the route */
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
    struct node_route *eps;
    const struct constraint *cons;
    uint32_t nlits, nparams, ncatchalls, neps;
    uint32_t ncons;
    uint32_t complex;       /* a complex segment's node: canal__complex_match() instead of cons */
    struct node **catchalls;
    const struct tseg *seg; /* the segment that made this node (NULL for the root) */
    char *key;              /* literal: folded per the case policy; parameter: constraint text */
    size_t keylen;
    size_t depth;           /* segments from the root to here */
};

/* paths.c: the table of literal paths, "a/b" -> the node the literal segments a, b reach. */
struct canal__path {
    uint64_t tail; /* the key's last len % 8 bytes as a word (canal__load_word()) */
    char *key;  /* folded when the table is (case-insensitive routers); NULL: an empty slot */
    size_t len;
    struct node *node;
};
struct canal__paths {
    struct canal__path *slots; /* open addressing, a power of two long, at most half full */
    size_t n, cap;
    unsigned shift;            /* 64 - log2(cap): a hash's slot is its top bits */
    int fold;                  /* keys are folded, and lookups compare ASCII case-insensitively */
};
/* The node of the literal path s[0..len), or NULL. */
struct node *canal__paths_find(const struct canal__paths *t, const char *s, size_t len);
/* Records that s[0..len) leads to node (the first one recorded stays). 0 or CANAL_ENOMEM. */
int canal__paths_add(struct canal__paths *t, const char *s, size_t len, struct node *node);
void canal__paths_free(struct canal__paths *t);

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
    uint64_t method_words[CANAL_ROUTER_MAX_METHODS]; /* names of up to 8 bytes as words */
    size_t nmethods;
    struct canal_route_group *groups;
    /* Routes whose registration ran out of memory after creating tree nodes: the nodes point
     * at their segments, so they live until the router is destroyed. */
    struct canal_route *dead;
    struct node_slab *slabs;     /* where the nodes below the root live (tree.c) */
    size_t slab_used;            /* nodes handed out from the first slab */
    struct canal__paths paths;   /* the literal paths (paths.c) */
};

/* template.c */
int canal__template_parse(struct canal_route *route, const char *tmpl, int strict_slash,
                          int fold, canal_error_info_t *err);
/* Most parts of a complex segment: parameters alternate with literals. */
#define CANAL__MAX_PARTS (2 * CANAL_ROUTER_MAX_PARAMS + 1)
/* 1 if v fits the complex segment s (its literals compared ASCII case-insensitively when fold),
 * with every value accepted by its constraints; vals, if not NULL, receives the value of each
 * parameter part (len 0: an optional one left out). */
int canal__complex_match(const struct tseg *s, canal_str_t v, int fold, canal_str_t *vals);
void canal__route_free_segments(struct canal_route *route);
int canal__constraints_ok(const struct constraint *cons, size_t ncons, canal_str_t value);

/* regex.c */
/* Compiles text[0..len) into c (re, mctx, jit, ecma): PCRE2 with UTF, '$' at the very end only, case-insensitive when caseless; and its ECMA-262
 * translation. Errors (CANAL_EINVAL for a pattern PCRE2 refuses or that cannot be written as
 * ECMA-262, CANAL_ENOMEM) name pos. On failure c is unchanged. */
int canal__regex_compile(struct constraint *c, const char *text, size_t len, int caseless,
                         size_t pos, canal_error_info_t *err);
/* 1 if the regex of c is found in v (0 if v is not valid UTF-8). Allocates nothing with the
 * JIT; thread-safe. */
int canal__regex_match(const struct constraint *c, canal_str_t v);
/* Frees what canal__regex_compile() made (the fields may be NULL). */
void canal__regex_free(struct constraint *c);
/* Tests: 0 turns the JIT off for the regexes compiled afterwards (the interpreter's path). */
void canal__regex_use_jit(int on);

/* tree.c */
/* s must already be folded (case-insensitive routers) unless fold is 1 */
struct node *canal__find_literal(const canal_router_t *r, const struct node *n, const char *s,
                                 size_t len, int fold, size_t *at);

/* Bytes s[0..len) (len <= 8) as one word, zero-padded above, by loads that read nothing outside
 * them (two overlapping ones when len is not 1, 2, 4 or 8); the byte order is the machine's
 * for len 8 and little-endian otherwise, which only has to be the same from call to call. */
static inline uint64_t canal__load_word(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    uint32_t a, b;
    uint64_t w;
    if (len == 8) {
        memcpy(&w, s, 8);
        return w;
    }
    if (len >= 4) {
        memcpy(&a, s, 4);
        memcpy(&b, s + len - 4, 4);
        return (uint64_t)a | (uint64_t)b << (8 * (len - 4));
    }
    if (len == 0)
        return 0;
    return (uint64_t)u[0] | (uint64_t)u[len / 2] << (8 * (len / 2)) | (uint64_t)u[len - 1] << (8 * (len - 1));
}

/* The index of a method name in the router, or -1. Every match starts here: names of up to 8
 * bytes compare as one word each (and their lengths, since a request's method may hold a
 * NUL); longer ones compare lengths first, so that memcmp never reads past a stored name. */
static inline int canal__method_index(const canal_router_t *r, canal_str_t method)
{
    if (method.len <= 8) {
        uint64_t w = canal__load_word(method.base, method.len);
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
