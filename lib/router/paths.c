/* SPDX-License-Identifier: MIT */
/*
 * The table of literal paths: every node of the tree that a path of literal segments only
 * reaches ("home/plaintext"), by that path. A request whose path is such a key reaches the same
 * node as the walk would (literal children come first at every level), so the matcher asks
 * this table before it walks, and a literal route costs one probe instead of a binary search
 * per segment.
 *
 * One hash and one probe serve registration and matching alike: open addressing, at most half
 * full, linear probing. The hash reads 8 bytes at a time and is blind to ASCII case (each
 * word is hashed with the 0x20 bit of every byte set), so a case-insensitive router hashes a
 * request's path as it comes; keys are stored folded and the probe folds only to compare.
 */
#include <stdlib.h>
#include <string.h>
#include "router_internal.h"

#define CASE_BITS 0x2020202020202020ULL

/* A path as the table looks at it: its last 0-7 bytes as one word (the rest is read as whole
 * words), and its hash. Multiplicative: the top bits of each product depend on every bit
 * before them, so a slot is taken from the top bits and no mixing is needed between words. */
struct lookup {
    const char *s;
    size_t len, words; /* words: the bytes before the tail, a multiple of 8 */
    uint64_t tail, hash;
};

static inline __attribute__((always_inline)) struct lookup lookup_of(const char *s, size_t len)
{
    struct lookup k = {s, len, len & ~(size_t)7, 0, 0x9E3779B97F4A7C15ULL};
    for (size_t i = 0; i < k.words; i += 8)
        k.hash = (k.hash ^ (canal__load_word(s + i, 8) | CASE_BITS)) * 0xff51afd7ed558ccdULL;
    k.tail = canal__load_word(s + k.words, len - k.words);
    k.hash = (k.hash ^ (k.tail | CASE_BITS)) * 0xff51afd7ed558ccdULL;
    return k;
}

/* Whether slot p holds k's path: the same length and tail, then the words (no call: keys are
 * short); a case-insensitive table compares the bytes folded when that fails. */
static inline __attribute__((always_inline)) int same(const struct canal__path *p, const struct lookup *k,
                                                      int fold)
{
    if (p->len != k->len)
        return 0;
    if (p->tail == k->tail) {
        size_t i = 0;
        while (i < k->words && canal__load_word(k->s + i, 8) == canal__load_word(p->key + i, 8))
            i += 8;
        if (i == k->words)
            return 1;
    }
    if (!fold)
        return 0;
    for (size_t i = 0; i < k->len; i++)
        if (canal__lower((unsigned char)k->s[i]) != (unsigned char)p->key[i])
            return 0;
    return 1;
}

/* The slot of k in t: its key's, or the empty one where it would go. t->cap must be > 0. */
static inline __attribute__((always_inline)) struct canal__path *probe(const struct canal__paths *t,
                                                                       const struct lookup *k)
{
    size_t mask = t->cap - 1;
    for (size_t i = (size_t)(k->hash >> t->shift);; i = (i + 1) & mask) {
        struct canal__path *p = &t->slots[i];
        if (p->key == NULL || same(p, k, t->fold))
            return p;
    }
}

struct node *canal__paths_find(const struct canal__paths *t, const char *s, size_t len)
{
    if (t->n == 0)
        return NULL;
    struct lookup k = lookup_of(s, len);
    return probe(t, &k)->node;
}

int canal__paths_add(struct canal__paths *t, const char *s, size_t len, struct node *node)
{
    if ((t->n + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct canal__paths grown = {calloc(cap, sizeof(struct canal__path)), t->n, cap,
                                     64 - (unsigned)__builtin_ctzll(cap), t->fold};
        if (grown.slots == NULL)
            return CANAL_ENOMEM;
        for (size_t i = 0; i < t->cap; i++)
            if (t->slots[i].key != NULL) {
                struct lookup k = lookup_of(t->slots[i].key, t->slots[i].len);
                *probe(&grown, &k) = t->slots[i];
            }
        free(t->slots);
        *t = grown;
    }
    struct lookup k = lookup_of(s, len);
    struct canal__path *p = probe(t, &k);
    if (p->key != NULL)
        return 0; /* another route made this node's entry already */
    char *key = malloc(len + 1);
    if (key == NULL)
        return CANAL_ENOMEM;
    for (size_t i = 0; i < len; i++)
        key[i] = t->fold ? (char)canal__lower((unsigned char)s[i]) : s[i];
    key[len] = '\0';
    /* the key's tail as the table compares it: folded, like the key */
    *p = (struct canal__path){canal__load_word(key + k.words, len - k.words), key, len, node};
    t->n++;
    return 0;
}

void canal__paths_free(struct canal__paths *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->slots[i].key);
    free(t->slots);
}
