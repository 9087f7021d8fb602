/* SPDX-License-Identifier: MIT */
/*
 * The data cache (lib/cache/data.c): values in and out, replaced and deleted, expiry, the
 * size bound and its least-recently-used order, many threads at once (run under TSan by
 * make test SANITIZE=thread), and its lines in /metrics.
 */
#include "test.h"
#include <pthread.h>
#include <unistd.h>
#include <canal.h>
#include <canal/testing.h>

static void values(void **state)
{
    canal_app_t *app = canal_app_create(NULL);
    canal_error_info_t err;
    canal_cache_t *c = canal_cache_create(app, &(canal_cache_options_t){.name = "t"}, &err);
    assert_non_null(c);
    char buf[64];
    size_t len = 0;
    assert_int_equal(canal_cache_get(c, "k", 1, buf, sizeof(buf), &len), CANAL_ENOTFOUND);
    assert_int_equal(canal_cache_set(c, "k", 1, "value", 5, 0), 0);
    assert_int_equal(canal_cache_get(c, "k", 1, buf, sizeof(buf), &len), 0);
    assert_int_equal(len, 5);
    assert_memory_equal(buf, "value", 5);
    assert_int_equal(canal_cache_get(c, "k", 1, buf, 3, &len), CANAL_ELIMIT); /* too small: the length */
    assert_int_equal(len, 5);
    assert_int_equal(canal_cache_set(c, "k", 1, "other", 5, 0), 0); /* replaced */
    assert_int_equal(canal_cache_get(c, "k", 1, buf, sizeof(buf), &len), 0);
    assert_memory_equal(buf, "other", 5);
    assert_int_equal(canal_cache_set(c, "e", 1, NULL, 0, 0), 0); /* an empty value is a value */
    assert_int_equal(canal_cache_get(c, "e", 1, buf, 0, &len), 0);
    assert_int_equal(len, 0);
    assert_int_equal(canal_cache_set(c, "a\0b", 3, "x", 1, 0), 0); /* keys are bytes */
    assert_int_equal(canal_cache_get(c, "a", 1, buf, sizeof(buf), &len), CANAL_ENOTFOUND);
    assert_int_equal(canal_cache_get(c, "a\0b", 3, buf, sizeof(buf), &len), 0);
    assert_int_equal(canal_cache_delete(c, "k", 1), 0);
    assert_int_equal(canal_cache_delete(c, "k", 1), CANAL_ENOTFOUND);
    assert_int_equal(canal_cache_get(c, "k", 1, buf, sizeof(buf), &len), CANAL_ENOTFOUND);
    /* refused */
    char big[CANAL_CACHE_MAX_KEY + 1] = {0};
    assert_int_equal(canal_cache_set(c, big, sizeof(big), "x", 1, 0), CANAL_EINVAL);
    assert_int_equal(canal_cache_set(c, "", 0, "x", 1, 0), CANAL_EINVAL);
    assert_null(canal_cache_create(app, &(canal_cache_options_t){.name = "a b"}, &err));
    assert_int_equal(err.code, CANAL_EINVAL);
    canal_app_destroy(app); /* frees the cache */
}

static void expiry_and_bound(void **state)
{
    canal_app_t *app = canal_app_create(NULL);
    /* 16 shards of 4 KiB: an entry of 1 KiB and more does not fit twice in one shard */
    canal_cache_t *c = canal_cache_create(app, &(canal_cache_options_t){.max_bytes = 16 * 4096, .ttl_ms = 60000}, NULL);
    char buf[2048], v[1500];
    size_t len;
    assert_int_equal(canal_cache_set(c, "soon", 4, "x", 1, 1), 0); /* 1 ms */
    usleep(20000);
    assert_int_equal(canal_cache_get(c, "soon", 4, buf, sizeof(buf), &len), CANAL_ENOTFOUND);
    assert_int_equal(canal_cache_set(c, "later", 5, "x", 1, 0), 0); /* the cache's 60 s */
    assert_int_equal(canal_cache_get(c, "later", 5, buf, sizeof(buf), &len), 0);
    assert_int_equal(canal_cache_set(c, "huge", 4, buf, 4096, 0), CANAL_ELIMIT); /* over a shard */
    /* 400 values of 1.5 KiB into 64 KiB (two a shard): the bound holds, the newest stay, and
     * least recently used goes first: "keep", read after every insert, is never the oldest
     * of its shard, while the first keys, never read, are pushed out */
    memset(v, 'v', sizeof(v));
    assert_int_equal(canal_cache_set(c, "keep", 4, v, sizeof(v), 0), 0);
    for (int i = 0; i < 400; i++) {
        assert_int_equal(canal_cache_set(c, &i, sizeof(i), v, sizeof(v), 0), 0);
        assert_int_equal(canal_cache_get(c, "keep", 4, buf, sizeof(buf), &len), 0);
    }
    int present = 0, early = 0;
    for (int i = 0; i < 400; i++) {
        int hit = canal_cache_get(c, &i, sizeof(i), buf, sizeof(buf), &len) == 0;
        present += hit;
        early += hit && i < 20;
    }
    assert_true(present > 0 && present <= 16 * 2);
    assert_int_equal(early, 0);
    int last = 399;
    assert_int_equal(canal_cache_get(c, &last, sizeof(last), buf, sizeof(buf), &len), 0);
    canal_app_destroy(app);
}

/* many threads on few keys: every value read is the one its key was written with */
struct worker_arg {
    canal_cache_t *c;
    unsigned seed;
    int bad;
};

static void *hammer(void *p)
{
    struct worker_arg *a = p;
    for (int i = 0; i < 20000; i++) {
        unsigned k = (unsigned)rand_r(&a->seed) % 64, v[8], got[8];
        size_t len;
        for (int j = 0; j < 8; j++)
            v[j] = k * 1000 + (unsigned)j;
        switch (rand_r(&a->seed) % 4) {
        case 0:
            canal_cache_set(a->c, &k, sizeof(k), v, sizeof(v), 0);
            break;
        case 1:
            canal_cache_delete(a->c, &k, sizeof(k));
            break;
        default:
            if (canal_cache_get(a->c, &k, sizeof(k), got, sizeof(got), &len) == 0 &&
                (len != sizeof(v) || memcmp(got, v, sizeof(v)) != 0))
                a->bad++;
        }
    }
    return NULL;
}

static void threads(void **state)
{
    canal_app_t *app = canal_app_create(NULL);
    canal_cache_t *c = canal_cache_create(app, &(canal_cache_options_t){.max_bytes = 16 * 1024}, NULL);
    pthread_t t[8];
    struct worker_arg a[8];
    for (int i = 0; i < 8; i++) {
        a[i] = (struct worker_arg){c, (unsigned)i + 1, 0};
        assert_int_equal(pthread_create(&t[i], NULL, hammer, &a[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(a[i].bad, 0);
    }
    canal_app_destroy(app);
}

static int h_get(canal_req_t *req, void *data)
{
    char buf[16];
    size_t len;
    int rc = canal_cache_get(data, "k", 1, buf, sizeof(buf), &len);
    return canal_res_text(req, rc == 0 ? 200 : 404, rc == 0 ? "hit" : "miss");
}

static void metrics(void **state)
{
    canal_app_t *app = canal_app_create(NULL);
    canal_error_info_t err;
    canal_cache_t *c = canal_cache_create(app, &(canal_cache_options_t){.name = "worlds"}, &err);
    assert_int_equal(canal_app_get(app, "get", h_get, c), 0);
    assert_int_equal(canal_app_metrics(app, "metrics", &err), 0);
    canal_test_t *t = canal_test_start(app, &err);
    assert_non_null(t);
    canal_test_response_free(canal_test_get(t, "/get"));
    assert_int_equal(canal_cache_set(c, "k", 1, "v", 1, 0), 0);
    canal_test_response_free(canal_test_get(t, "/get"));
    canal_test_response_free(canal_test_get(t, "/get"));
    canal_test_response_t *r = canal_test_get(t, "/metrics");
    assert_non_null(strstr(r->body, "canal_cache_hits_total{cache=\"worlds\"} 2\n"));
    assert_non_null(strstr(r->body, "canal_cache_misses_total{cache=\"worlds\"} 1\n"));
    assert_non_null(strstr(r->body, "canal_cache_evictions_total{cache=\"worlds\"} 0\n"));
    assert_non_null(strstr(r->body, "canal_cache_bytes{cache=\"worlds\"} 66\n")); /* 64 + "k" + "v" */
    assert_non_null(strstr(r->body, "# TYPE canal_cache_bytes gauge\n"));
    canal_test_response_free(r);
    assert_int_equal(canal_test_stop(t), 0);
    canal_app_destroy(app);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(values),
        cmocka_unit_test(expiry_and_bound),
        cmocka_unit_test(threads),
        cmocka_unit_test(metrics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
