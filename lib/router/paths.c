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

/* Multiplicative: the top bits of each product depend on every bit before them, so a slot is
 * taken from the top bits and no mixing is needed between words. */
static inline __attribute__((always_inline)) uint64_t hash(const char *s, size_t len)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    size_t i = 0;
    for (; i + 8 <= len; i += 8)
        h = (h ^ (canal__load_word(s + i, 8) | CASE_BITS)) * 0xff51afd7ed558ccdULL;
    if (i < len)
        h = (h ^ (canal__load_word(s + i, len - i) | CASE_BITS)) * 0xff51afd7ed558ccdULL;
    return h;
}

static inline __attribute__((always_inline)) int same(const char *s, const char *key, size_t len,
                                                      int fold)
{
    size_t k = 0; /* first as words, the way the hash read them (no call: keys are short) */
    while (k + 8 <= len && canal__load_word(s + k, 8) == canal__load_word(key + k, 8))
        k += 8;
    if (k + 8 > len && canal__load_word(s + k, len - k) == canal__load_word(key + k, len - k))
        return 1;
    if (!fold)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (canal__lower((unsigned char)s[i]) != (unsigned char)key[i])
            return 0;
    return 1;
}

/* The slot of s in t: its key's, or the empty one where it would go. t->cap must be > 0. */
static inline __attribute__((always_inline)) struct canal__path *probe(const struct canal__paths *t, const char *s, size_t len, uint64_t h)
{
    size_t mask = t->cap - 1;
    for (size_t i = (size_t)(h >> t->shift);; i = (i + 1) & mask) {
        struct canal__path *p = &t->slots[i];
        if (p->key == NULL || (p->hash == h && p->len == len && same(s, p->key, len, t->fold)))
            return p;
    }
}

struct node *canal__paths_find(const struct canal__paths *t, const char *s, size_t len)
{
    if (t->n == 0)
        return NULL;
    return probe(t, s, len, hash(s, len))->node;
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
            if (t->slots[i].key != NULL)
                *probe(&grown, t->slots[i].key, t->slots[i].len, t->slots[i].hash) = t->slots[i];
        free(t->slots);
        *t = grown;
    }
    uint64_t h = hash(s, len);
    struct canal__path *p = probe(t, s, len, h);
    if (p->key != NULL)
        return 0; /* another route made this node's entry already */
    char *key = malloc(len + 1);
    if (key == NULL)
        return CANAL_ENOMEM;
    for (size_t i = 0; i < len; i++)
        key[i] = t->fold ? (char)canal__lower((unsigned char)s[i]) : s[i];
    key[len] = '\0';
    *p = (struct canal__path){h, key, len, node};
    t->n++;
    return 0;
}

void canal__paths_free(struct canal__paths *t)
{
    for (size_t i = 0; i < t->cap; i++)
        free(t->slots[i].key);
    free(t->slots);
}
