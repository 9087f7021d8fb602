/* SPDX-License-Identifier: MIT */
/*
 * canal-testapp: a server for the end-to-end tests, with one route per behaviour of the
 * server core that the tests check (blocking work, failures, bodies, queries, headers, ...).
 * Prints "listening on http://HOST:PORT" on stderr once it accepts connections.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <canal.h>

static canal_app_t *app;

/* /hang?ms=N: a deferred request answered by a helper thread after N ms, or as soon as the app
 * has stopped (then with nothing left to answer), so that a shutdown test can have a request
 * in flight that no handler is blocking on. */
static pthread_mutex_t hang_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hang_cond = PTHREAD_COND_INITIALIZER;
static int stopped;
static pthread_t hang_threads[64];
static size_t nhang;

struct hang {
    canal_pending_t *p;
    int64_t ms;
};

static void hang_done(canal_req_t *req, void *data)
{
    struct hang *h = data;
    if (req != NULL)
        canal_res_text(req, 200, canal_req_printf(req, "hung %lld", (long long)h->ms));
    free(h);
}

static void *hang_main(void *arg)
{
    struct hang *h = arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += h->ms / 1000;
    until.tv_nsec += (h->ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&hang_lock);
    while (!stopped && pthread_cond_timedwait(&hang_cond, &hang_lock, &until) == 0)
        ;
    pthread_mutex_unlock(&hang_lock);
    canal_pending_post(h->p, hang_done, h);
    return NULL;
}

static int hang(canal_req_t *req, void *data)
{
    struct hang *h = malloc(sizeof(*h));
    h->ms = 1000;
    canal_req_query_int64(req, "ms", &h->ms);
    pthread_mutex_lock(&hang_lock);
    if (nhang == sizeof(hang_threads) / sizeof(hang_threads[0])) {
        pthread_mutex_unlock(&hang_lock);
        free(h);
        return canal_res_problem(req, 503, "too many hanging requests");
    }
    h->p = canal_req_defer(req);
    pthread_create(&hang_threads[nhang++], NULL, hang_main, h);
    pthread_mutex_unlock(&hang_lock);
    return CANAL_PENDING;
}

/* Ways for a handler to fail: an error code, an answer refused after a failure. */
static int fail_code(canal_req_t *req, void *data)
{
    return -42;
}

static int res_fail(canal_req_t *req, void *data)
{
    canal_req_fail(req, "answered as failed");
    return 0;
}

static int sleep_ms(canal_req_t *req, void *data)
{
    int64_t ms = 100;
    canal_req_query_int64(req, "ms", &ms);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL); /* blocks this worker's loop on purpose */
    return canal_res_text(req, 200, canal_req_printf(req, "slept %lld", (long long)ms));
}

static int fail(canal_req_t *req, void *data)
{
    return canal_req_fail(req, "boom <script>alert(1)</script> & \"quotes\"");
}

static int no_answer(canal_req_t *req, void *data)
{
    return 0;
}

static int echo(canal_req_t *req, void *data)
{
    canal_str_t body = canal_req_body(req), ct = canal_req_header(req, "content-type");
    const char *type = ct.base ? canal_req_printf(req, "%.*s", (int)ct.len, ct.base) : "application/octet-stream";
    return canal_res_body(req, 200, type, body.base, body.len);
}

static int json_echo(canal_req_t *req, void *data)
{
    json_error_t err;
    json_t *doc = canal_req_json(req, &err);
    if (doc == NULL)
        return canal_res_problem(req, 400, "%s", err.text);
    return canal_res_json(req, 200, doc); /* borrowed from the request */
}

static int query(canal_req_t *req, void *data)
{
    const canal_param_t *p;
    size_t n = canal_req_query_all(req, &p);
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(out, json_pack("[s#,s#]", p[i].name.base, (int)p[i].name.len,
                                             p[i].value.base, (int)p[i].value.len));
    return canal_res_json_new(req, 200, out);
}

static int params(canal_req_t *req, void *data)
{
    int32_t b;
    canal_str_t a = canal_req_param(req, "a");
    int rc = canal_req_param_int32(req, "b", &b);
    return canal_res_json_new(req, 200, json_pack("{s:s#, s:i, s:s}", "a", a.base, (int)a.len, "b",
                                                  (int)b, "route",
                                                  canal_route_template(canal_req_route(req))));
    (void)rc;
}

static int header(canal_req_t *req, void *data)
{
    canal_str_t v = canal_req_header(req, "X-Test");
    canal_res_header(req, "X-Echo", v.base ? canal_req_printf(req, "%.*s", (int)v.len, v.base) : "none");
    if (canal_res_header(req, "X-Bad", "a\r\nb: c") != CANAL_EINVAL)
        return canal_req_fail(req, "a header with CR LF was accepted");
    return canal_res_status(req, 204);
}

static int redirect(canal_req_t *req, void *data)
{
    return canal_res_redirect(req, 302, "/target?x=1");
}

static int stats(canal_req_t *req, void *data)
{
    json_t *out = json_array();
    for (size_t i = 0; i < canal_app_worker_count(app); i++)
        json_array_append_new(out, json_integer((json_int_t)canal_app_worker_requests(app, i)));
    return canal_res_json_new(req, 200, out);
}

/* The answer is set, not sent: the last one set is the one committed. */
static int twice(canal_req_t *req, void *data)
{
    canal_res_text(req, 200, "first");
    canal_res_header(req, "x-set", "both");
    return canal_res_text(req, 201, "second");
}

/* A form error as problem details: 413 for a limit, 415 for another media type, else 400. */
static int form_problem(canal_req_t *req, int rc, const canal_error_info_t *err)
{
    return canal_res_problem(req, rc == CANAL_ELIMIT ? 413 : rc == CANAL_ETYPE ? 415 : 400, "%s", err->message);
}

/* POST /form: the form's fields (canal_req_form_all()), [[name, value], ...] */
static int form(canal_req_t *req, void *data)
{
    const canal_param_t *f;
    canal_error_info_t err;
    int n = canal_req_form_all(req, &f, &err);
    if (n < 0)
        return form_problem(req, n, &err);
    json_t *out = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(out, json_pack("[s#s#]", f[i].name.base, f[i].name.len, f[i].value.base, f[i].value.len));
    return canal_res_json_new(req, 200, out);
}

/* POST /upload: each part of a multipart/form-data body as {name, filename (null for a
 * field), type, size}; POST /upload?part=N: part N's bytes as they came, with its type. */
static int upload(canal_req_t *req, void *data)
{
    canal_multipart_t mp;
    canal_part_t p;
    canal_error_info_t err;
    int64_t want = -1;
    canal_req_query_int64(req, "part", &want);
    int rc = canal_multipart_init(&mp, canal_req_header(req, "content-type"), canal_req_body(req), &err);
    json_t *out = json_array();
    for (int64_t i = 0; rc == 0 && (rc = canal_multipart_next(&mp, &p, &err)) == 1; i++, rc = 0) {
        if (i == want) {
            json_decref(out);
            canal_res_body_static(req, 200, canal_req_printf(req, "%.*s", (int)p.content_type.len, p.content_type.base),
                           p.data.base, p.data.len);
            return 0;
        }
        json_array_append_new(out, json_pack("{s:s#,s:o,s:s#,s:I}", "name", p.name.base, p.name.len, "filename",
                                             CANAL_PART_IS_FILE(&p) ? json_stringn(p.filename.base, p.filename.len)
                                                                    : json_null(),
                                             "type", p.content_type.base, p.content_type.len, "size",
                                             (json_int_t)p.data.len));
    }
    if (rc < 0) {
        json_decref(out);
        return form_problem(req, rc, &err);
    }
    return canal_res_json_new(req, 200, out);
}

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    if (canal_config_from_env(&cfg, &err) != 0 || canal_config_from_args(&cfg, &argc, argv, &err) != 0) {
        fprintf(err.code == CANAL_EHELP ? stdout : stderr, "canal-testapp: %s\n%s", err.message, canal_config_usage());
        return err.code == CANAL_EHELP ? 0 : 2;
    }
    if (argc > 1) {
        fprintf(stderr, "canal-testapp: unknown argument %s\n%s", argv[1], canal_config_usage());
        return 2;
    }
    app = canal_app_create(&cfg);
    struct {
        const char *method, *tmpl;
        canal_handler_fn fn;
    } routes[] = {
        {"GET", "sleep", sleep_ms},      {"GET", "fail", fail},
        {"GET", "fail/{*rest}", fail},   /* any path, for the error page's escaping */
        {"GET", "noanswer", no_answer},  {"POST", "echo", echo},
        {"POST", "json", json_echo},     {"GET", "query", query},
        {"GET", "param/{a}/{b:int}", params}, {"GET", "header", header},
        {"GET", "redirect", redirect},   {"GET", "stats", stats},
        {"GET", "twice", twice},         {"GET", "hang", hang},
        {"GET", "failcode", fail_code},  {"GET", "resfail", res_fail},
        {"POST", "form", form},          {"POST", "upload", upload},
    };
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        if (canal_app_route(app, &(canal_endpoint_spec_t){.method = routes[i].method, .tmpl = routes[i].tmpl, .handler = routes[i].fn}, NULL, &err) != 0) {
            fprintf(stderr, "canal-testapp: %s: %s\n", routes[i].tmpl, err.message);
            return 1;
        }
    /* a route with a body limit of its own, below the app's */
    if (canal_app_route(app, &(canal_endpoint_spec_t){.method = "POST", .tmpl = "small", .handler = form, .max_body = 64},
                        NULL, &err) != 0) {
        fprintf(stderr, "canal-testapp: small: %s\n", err.message);
        return 1;
    }
    if (canal_app_start(app) != 0)
        return 1;
    fprintf(stderr, "listening on http://%s:%u\n", canal_app_config(app)->host, canal_app_port(app, 0));
    int rc = canal_app_wait(app);
    uint64_t served = 0;
    for (size_t i = 0; i < canal_app_worker_count(app); i++)
        served += canal_app_worker_requests(app, i);
    fprintf(stderr, "served %llu requests\n", (unsigned long long)served);
    pthread_mutex_lock(&hang_lock);
    stopped = 1;
    pthread_cond_broadcast(&hang_cond);
    pthread_mutex_unlock(&hang_lock);
    for (size_t i = 0; i < nhang; i++)
        pthread_join(hang_threads[i], NULL);
    canal_app_destroy(app);
    return rc == 0 ? 0 : 1;
}
