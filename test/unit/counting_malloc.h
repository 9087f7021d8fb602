/* SPDX-License-Identifier: MIT */
/*
 * A counting, failing allocator for the tests that make each allocation fail in turn (the
 * router's registration in router_match_test.c, the controller layer's in
 * controller_chaos_test.c). Include it once, in a test program's only .c file: it defines
 * malloc, calloc, realloc and free for the whole program.
 *
 *   counting        count (and maybe fail) only while set
 *   nallocs         allocations made while counting
 *   live            successful allocations minus frees while counting
 *   fail_countdown  the allocation that sees 0 fails; -1: none do
 *   COUNTING_MALLOC 0 when this build cannot count
 *   counting_usable()  0 when this build or this run cannot count (the tests then skip):
 *                   under valgrind, whose allocator replaces these functions
 */
#ifndef CANAL_TEST_COUNTING_MALLOC_H
#define CANAL_TEST_COUNTING_MALLOC_H

#include <stddef.h>
#include <stdlib.h>

/* ---- counting allocator ------------------------------------------------------------------
 * The test links the router objects directly, so defining malloc and friends here replaces
 * them for the router and for libc (regexec, strdup) alike.
 *   COUNTING_MALLOC 1: a plain build; they forward to glibc's own allocator (__libc_malloc).
 *   COUNTING_MALLOC 2: gcc's AddressSanitizer, a shared library that comes right after the
 *     program: they forward to its malloc (dlsym RTLD_NEXT), so ASan still watches every
 *     block. Its strdup interceptor allocates without calling malloc, so blocks are not all
 *     counted there: the chaos test then leaves leak accounting to LeakSanitizer.
 *   COUNTING_MALLOC 0: clang's sanitizers, linked into the program, where the next malloc
 *     would be libc's and the interceptors' blocks would be freed by the wrong allocator:
 *     the tests that need counting are skipped. */
#if defined(__clang__) && defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define COUNTING_MALLOC 0
#endif
#endif
#if !defined(COUNTING_MALLOC) && defined(__SANITIZE_THREAD__)
#define COUNTING_MALLOC 0 /* ThreadSanitizer: these single-threaded counts are not its subject */
#endif
#if !defined(COUNTING_MALLOC) && defined(__SANITIZE_ADDRESS__)
#define COUNTING_MALLOC 2
#endif
#ifndef COUNTING_MALLOC
#define COUNTING_MALLOC 1
#endif

/* volatile: the compiler assumes malloc touches no global of ours, and would otherwise move
 * the stores to these around the calls it makes to malloc */
static volatile int counting;       /* count (and maybe fail) only while set */
static volatile long nallocs;       /* allocations made while counting */
static volatile long live;          /* successful allocations minus frees while counting */
static volatile long fail_countdown = -1; /* the allocation that sees 0 fails; -1: none do */

#if COUNTING_MALLOC
/* default visibility (the tests build with -fvisibility=hidden): libc's own calls to malloc,
 * from strdup or regcomp, must reach these too, or their memory would be freed uncounted */
#define EXPORTED __attribute__((visibility("default")))

#if COUNTING_MALLOC == 1
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);
#define next_malloc __libc_malloc
#define next_calloc __libc_calloc
#define next_realloc __libc_realloc
#define next_free __libc_free
static int from_arena(const void *p)
{
    (void)p;
    return 0;
}
#else
#include <dlfcn.h>
static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
/* dlsym may allocate while it looks the allocator up: that memory comes from here */
static _Alignas(16) char arena[8192];
static size_t arena_used;
static int resolving;

static int from_arena(const void *p)
{
    return (const char *)p >= arena && (const char *)p < arena + sizeof(arena);
}

static void *arena_alloc(size_t size)
{
    size = (size + 15) & ~(size_t)15;
    if (size > sizeof(arena) - arena_used)
        return NULL;
    void *p = arena + arena_used;
    arena_used += size;
    return p; /* static memory: already zero, as calloc wants */
}

static int resolve(void)
{
    if (next_free != NULL)
        return 1;
    if (resolving)
        return 0;
    resolving = 1;
    *(void **)&next_malloc = dlsym(RTLD_NEXT, "malloc");
    *(void **)&next_calloc = dlsym(RTLD_NEXT, "calloc");
    *(void **)&next_realloc = dlsym(RTLD_NEXT, "realloc");
    *(void **)&next_free = dlsym(RTLD_NEXT, "free");
    resolving = 0;
    if (next_malloc == NULL || next_calloc == NULL || next_realloc == NULL || next_free == NULL)
        abort();
    return 1;
}
#endif

static int should_fail(void)
{
    if (!counting)
        return 0;
    nallocs++;
    if (fail_countdown < 0)
        return 0;
    return fail_countdown-- == 0;
}

EXPORTED void *malloc(size_t size)
{
#if COUNTING_MALLOC == 2
    if (!resolve())
        return arena_alloc(size);
#endif
    if (should_fail())
        return NULL;
    void *p = next_malloc(size);
    if (p != NULL && counting)
        live++;
    return p;
}

EXPORTED void *calloc(size_t n, size_t size)
{
#if COUNTING_MALLOC == 2
    if (!resolve())
        return size && n > SIZE_MAX / size ? NULL : arena_alloc(n * size);
#endif
    if (should_fail())
        return NULL;
    void *p = next_calloc(n, size);
    if (p != NULL && counting)
        live++;
    return p;
}

EXPORTED void *realloc(void *old, size_t size)
{
#if COUNTING_MALLOC == 2
    if (!resolve() || from_arena(old))
        abort(); /* nothing reallocates the few blocks of the lookup */
#endif
    if (should_fail())
        return NULL;
    void *p = next_realloc(old, size);
    if (p != NULL && old == NULL && counting)
        live++;
    return p;
}

EXPORTED void free(void *p)
{
    if (p == NULL || from_arena(p))
        return;
#if COUNTING_MALLOC == 2
    resolve();
#endif
    if (counting)
        live--;
    next_free(p);
}
#endif

/* valgrind replaces malloc and friends in the program too (ours never run): nothing to count */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define COUNTING_UNDER_VALGRIND() RUNNING_ON_VALGRIND
#endif
#endif
#ifndef COUNTING_UNDER_VALGRIND
#define COUNTING_UNDER_VALGRIND() 0
#endif

static int counting_usable(void)
{
    return COUNTING_MALLOC && !COUNTING_UNDER_VALGRIND();
}

#endif
