/* SPDX-License-Identifier: MIT */
/*
 * The table by which a worker finds canal's request object from h2o's (req.c): every request
 * is put in when it starts and taken out by the logger that ends it. Checked against a plain
 * array on random sequences of puts and takes (small tables, where runs of neighbours and
 * the deletion that moves them back are the common case, and tables that grow to thousands),
 * on keys that are not in it, and when growing runs out of memory.
 */
#include "test.h"
#include <h2o.h>
#include "core/core.h"
#include "counting_malloc.h"

/* Keys are never dereferenced: addresses spaced like real h2o_req_t's (which sit in
 * connection structures a few KiB apart) */
static h2o_req_t *key(size_t i)
{
    return (h2o_req_t *)(uintptr_t)(0x10000 + 4096 * i + 64 * (i % 7));
}

static uint64_t rng = 88172645463325252ULL;
static size_t next_random(size_t n)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (size_t)(rng % n);
}

/* ops random puts and takes over nkeys keys, with at most cap in the table at once */
static void against_model(size_t nkeys, size_t cap, size_t ops)
{
    struct canal_reqmap m;
    canal_req_t *reqs = calloc(nkeys, sizeof(*reqs));
    char *in = calloc(nkeys, 1);
    size_t n = 0;
    assert_non_null(reqs);
    assert_non_null(in);
    assert_int_equal(canal__reqmap_init(&m), 0);
    for (size_t i = 0; i < nkeys; i++)
        reqs[i].h2o = key(i);
    for (size_t op = 0; op < ops; op++) {
        size_t i = next_random(nkeys);
        if (!in[i] && n < cap) {
            assert_int_equal(canal__reqmap_put(&m, &reqs[i]), 0);
            in[i] = 1, n++;
        } else {
            assert_ptr_equal(canal__reqmap_take(&m, key(i)), in[i] ? &reqs[i] : NULL);
            n -= in[i], in[i] = 0;
        }
        assert_int_equal(m.n, n);
        assert_true(2 * m.n <= m.mask + 1);
    }
    /* everything left is found exactly once */
    for (size_t i = 0; i < nkeys; i++) {
        assert_ptr_equal(canal__reqmap_take(&m, key(i)), in[i] ? &reqs[i] : NULL);
        assert_null(canal__reqmap_take(&m, key(i)));
    }
    assert_int_equal(m.n, 0);
    for (size_t i = 0; i <= m.mask; i++)
        assert_null(m.slots[i]);
    canal__reqmap_dispose(&m);
    free(reqs);
    free(in);
}

static void small_tables(void **state)
{
    against_model(40, 32, 200000); /* up to half full: long runs, many moves back */
    against_model(8, 8, 20000);
}

static void growing(void **state)
{
    against_model(20000, 5000, 200000);
}

static void absent_keys(void **state)
{
    struct canal_reqmap m;
    canal_req_t a = {.h2o = key(1)};
    assert_int_equal(canal__reqmap_init(&m), 0);
    assert_null(canal__reqmap_take(&m, key(1)));
    assert_int_equal(canal__reqmap_put(&m, &a), 0);
    assert_null(canal__reqmap_take(&m, key(2)));
    assert_ptr_equal(canal__reqmap_take(&m, key(1)), &a);
    canal__reqmap_dispose(&m);
}

/* A table that cannot grow refuses the put and keeps what it has (the request is then
 * answered 503 untracked: req.c). */
static void out_of_memory(void **state)
{
    if (!counting_usable())
        skip();
    struct canal_reqmap m;
    canal_req_t reqs[64];
    assert_int_equal(canal__reqmap_init(&m), 0);
    size_t i = 0;
    for (; 2 * (i + 1) <= m.mask + 1; i++) {
        reqs[i].h2o = key(i);
        assert_int_equal(canal__reqmap_put(&m, &reqs[i]), 0);
    }
    reqs[i].h2o = key(i);
    counting = 1, fail_countdown = 0;
    assert_int_equal(canal__reqmap_put(&m, &reqs[i]), -1);
    counting = 0, fail_countdown = -1;
    assert_int_equal(m.n, i);
    for (size_t k = 0; k < i; k++)
        assert_ptr_equal(canal__reqmap_take(&m, key(k)), &reqs[k]);
    assert_null(canal__reqmap_take(&m, key(i)));
    assert_int_equal(canal__reqmap_put(&m, &reqs[i]), 0); /* memory again: it grows */
    assert_ptr_equal(canal__reqmap_take(&m, key(i)), &reqs[i]);
    canal__reqmap_dispose(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_tables),
        cmocka_unit_test(growing),
        cmocka_unit_test(absent_keys),
        cmocka_unit_test(out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
