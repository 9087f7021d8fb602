/* SPDX-License-Identifier: MIT */
/*
 * The offload pool's thread hooks (canal_app_offload_hooks()) and jobs without a request
 * (canal_offload_job()), through the test client: each pool thread's init runs before its
 * jobs and on its thread, its exit at the stop; a job queued from a timer runs its work on
 * the pool and its done back on the timer's worker; what is refused.
 */
#include "test.h"
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <canal.h>
#include <canal/testing.h>

static atomic_int inits, exits;
static _Thread_local int pool_thread_id; /* what thread_init left for this thread's jobs */

static int thread_init(void *data)
{
    pool_thread_id = atomic_fetch_add(&inits, 1) + 1;
    return 0;
}

static void thread_exit(void *data)
{
    atomic_fetch_add(&exits, 1);
}

static int failing_init(void *data)
{
    return -1;
}

/* GET /who: the id of the pool thread that did the work */
struct who {
    int id;
};

static void who_work(void *data)
{
    ((struct who *)data)->id = pool_thread_id;
}

static void who_done(canal_req_t *req, void *data)
{
    struct who *w = data;
    if (req != NULL)
        canal_res_text(req, 200, canal_req_printf(req, "%d", w->id));
    free(w);
}

static int who(canal_req_t *req, void *data)
{
    struct who *w = calloc(1, sizeof(*w));
    return w != NULL ? canal_offload(req, who_work, who_done, w) : -1;
}

/* a job from a timer: where its work and its done ran */
static struct {
    atomic_int queued, done;
    pthread_t timer_thread, work_thread, done_thread;
    int work_id;
} job;

static void job_work(void *data)
{
    job.work_thread = pthread_self();
    job.work_id = pool_thread_id;
}

static void job_done(void *data)
{
    job.done_thread = pthread_self();
    atomic_store(&job.done, 1);
}

static void every(canal_app_t *app, void *data)
{
    if (atomic_exchange(&job.queued, 1) == 0) {
        job.timer_thread = pthread_self();
        if (canal_offload_job(app, job_work, job_done, NULL) != 0)
            atomic_store(&job.done, -1);
    }
}

static void hooks_and_jobs(void **state)
{
    canal_config_t cfg;
    canal_config_init(&cfg);
    cfg.threads = 2;
    cfg.offload_threads = 3;
    canal_app_t *app = canal_app_create(&cfg);
    assert_non_null(app);
    assert_int_equal(canal_app_offload_hooks(app, &(canal_offload_hooks_t){thread_init, thread_exit, NULL}), 0);
    assert_int_equal(canal_app_get(app, "who", who, NULL), 0);
    assert_int_equal(canal_app_every(app, 10, every, NULL), 0);
    /* not a worker's thread */
    assert_int_equal(canal_offload_job(app, job_work, job_done, NULL), CANAL_ESTATE);
    canal_test_t *t = canal_test_start(app, NULL);
    assert_non_null(t);
    assert_int_equal(atomic_load(&inits), 3); /* every init ran before the start returned */
    assert_int_equal(canal_app_offload_hooks(app, NULL), CANAL_ESTATE);
    for (int i = 0; i < 6; i++) {
        canal_test_response_t *r = canal_test_get(t, "/who");
        assert_int_equal(r->status, 200);
        int id = atoi(r->body);
        assert_true(id >= 1 && id <= 3); /* the work ran on a thread its init prepared */
        canal_test_response_free(r);
    }
    for (int i = 0; i < 5000 && atomic_load(&job.done) == 0; i++)
        usleep(1000);
    assert_int_equal(atomic_load(&job.done), 1);
    assert_true(job.work_id >= 1 && job.work_id <= 3);
    assert_false(pthread_equal(job.work_thread, job.timer_thread));
    assert_true(pthread_equal(job.done_thread, job.timer_thread)); /* back on the timer's worker */
    assert_int_equal(canal_test_stop(t), 0);
    assert_int_equal(atomic_load(&exits), 3);
    canal_app_destroy(app);
}

static void init_fails(void **state)
{
    canal_config_t cfg;
    canal_config_init(&cfg);
    cfg.threads = 1;
    cfg.offload_threads = 2;
    canal_app_t *app = canal_app_create(&cfg);
    assert_int_equal(canal_app_offload_hooks(app, &(canal_offload_hooks_t){.thread_init = failing_init}), 0);
    assert_int_equal(canal_app_get(app, "who", who, NULL), 0);
    canal_error_info_t err;
    assert_null(canal_test_start(app, &err)); /* a pool thread that cannot start fails the start */
    canal_app_destroy(app);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hooks_and_jobs),
        cmocka_unit_test(init_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
