/* SPDX-License-Identifier: MIT */
/*
 * The app's life: created with its configuration, started (listeners bound, worker threads
 * running: listen.c, worker.c, conn.c), stopped and waited for, destroyed.
 *
 * Start-up binds every TCP listener once per worker (SO_REUSEPORT: the kernel spreads new
 * connections over the workers' sockets; a unix or inherited socket is one socket with a
 * descriptor per worker: listen.c), in the calling thread so a bind error is reported
 * before anything runs. Each worker thread then makes its own h2o event loop and context (see
 * worker_init: libh2o's socket buffers belong to the thread that creates the socket) and never
 * shares a connection with another thread.
 *
 * Shutdown: canal_app_stop() writes to a pipe (safe in a signal handler); canal_app_wait()
 * wakes up, marks the app draining (readiness answers 503 from now on) and, if a shutdown
 * delay is configured, waits that long while the workers go on accepting and serving, so a
 * load balancer that probes readiness moves traffic away before anything is refused. Then it
 * sends each worker a message through h2o's multithread queue. The worker closes
 * its listening sockets, asks h2o to shut down (keep-alive is refused from now on, HTTP/2 gets
 * GOAWAY), and keeps running its loop until no request is in flight and no connection has been
 * active for a short quiet period (so a request already on its way on a kept-alive connection
 * is still answered), or until the shutdown deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <openssl/err.h>
#include "core/core.h"

/* How long a stopping worker waits with no activity before it closes idle connections. */
#define QUIET_MS 200


static char *dup_str(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

canal_app_t *canal__app_new(const canal_config_t *cfg)
{
    canal_app_t *app = calloc(1, sizeof(*app));
    if (app == NULL)
        return NULL;
    if (cfg != NULL)
        app->cfg = *cfg;
    else
        canal_config_init(&app->cfg);
    app->host = dup_str(app->cfg.host != NULL ? app->cfg.host : "127.0.0.1");
    app->access_log = dup_str(app->cfg.access_log);
    app->tls_cert = dup_str(app->cfg.tls_cert);
    app->tls_key = dup_str(app->cfg.tls_key);
    app->trusted_proxies = dup_str(app->cfg.trusted_proxies);
    app->listen = dup_str(app->cfg.listen);
    app->unix_owner = dup_str(app->cfg.unix_owner);
    app->cfg.host = app->host;
    app->cfg.access_log = app->access_log;
    app->cfg.tls_cert = app->tls_cert;
    app->cfg.tls_key = app->tls_key;
    app->cfg.trusted_proxies = app->trusted_proxies;
    app->cfg.listen = app->listen;
    app->cfg.unix_owner = app->unix_owner;
    app->cfg.trace |= app->cfg.trace_echo; /* the echo needs the trace */
    app->stop_pipe[0] = app->stop_pipe[1] = -1;
    app->reload_pipe[0] = app->reload_pipe[1] = -1;
    atomic_init(&app->log_format, (int)app->cfg.log_format);
    atomic_init(&app->log_level, (int)app->cfg.log_level);
    if (app->host == NULL || (app->cfg.access_log != NULL && app->access_log == NULL) ||
        (app->cfg.trusted_proxies != NULL && app->trusted_proxies == NULL) ||
        (cfg != NULL && cfg->listen != NULL && app->listen == NULL) ||
        (cfg != NULL && cfg->unix_owner != NULL && app->unix_owner == NULL) ||
        (app->router = canal_router_create(&app->cfg.router)) == NULL) {
        canal_app_destroy(app);
        return NULL;
    }
    if (app->cfg.listen != NULL && strncmp(app->cfg.listen, "unix:", 5) != 0) {
        canal__log(app, CANAL_LOG_ERROR, "listen address '%.100s' is not unix:PATH", app->cfg.listen);
        canal_app_destroy(app);
        return NULL;
    }
    canal_error_info_t perr;
    int prc = canal__proxies_parse(app->cfg.trusted_proxies, &app->proxies, &app->nproxies, &perr);
    if (prc != 0) {
        if (prc != CANAL_ENOMEM)
            canal__log(app, CANAL_LOG_ERROR, "%s", perr.message);
        canal_app_destroy(app);
        return NULL;
    }
    canal__request_id_init(app);
    if (app->cfg.threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        app->cfg.threads = n > 0 ? (unsigned)n : 1;
    }

    /* a configuration not made by canal_config_init() (zeros): the defaults for the limits */
    canal_config_t defaults;
    canal_config_init(&defaults);
    if (app->cfg.header_timeout_ms == 0)
        app->cfg.header_timeout_ms = defaults.header_timeout_ms;
    if (app->cfg.body_timeout_ms == 0)
        app->cfg.body_timeout_ms = defaults.body_timeout_ms;
    if (app->cfg.keepalive_timeout_ms == 0)
        app->cfg.keepalive_timeout_ms = defaults.keepalive_timeout_ms;
    if (app->cfg.max_connections == 0)
        app->cfg.max_connections = defaults.max_connections;
    if (app->cfg.max_json_depth == 0)
        app->cfg.max_json_depth = defaults.max_json_depth;

    h2o_config_init(&app->globalconf);
    app->globalconf.max_request_entity_size = app->cfg.max_body_size;
    /* h2o's one HTTP/1 timer (head, body and keep-alive alike) only backs canal's own sweep
     * up: it must never fire first. HTTP/2 idles on h2o's timer. */
    uint64_t backstop = app->cfg.header_timeout_ms;
    if (app->cfg.body_timeout_ms > backstop)
        backstop = app->cfg.body_timeout_ms;
    if (app->cfg.keepalive_timeout_ms > backstop)
        backstop = app->cfg.keepalive_timeout_ms;
    app->globalconf.http1.req_timeout = backstop + 3 * canal__sweep_period(&app->cfg);
    app->globalconf.http2.idle_timeout = app->cfg.keepalive_timeout_ms;
    app->globalconf.server_name = h2o_iovec_init(H2O_STRLIT("canal"));
    app->hostconf = h2o_config_register_host(&app->globalconf, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    /* canal's handler serves the host's fallback path: h2o tries the registered paths first,
     * in order, and "/" would take every request from the static prefixes (ops.c) */
    app->pathconf = &app->hostconf->fallback_path;
    h2o_handler_t *handler = h2o_create_handler(app->pathconf, sizeof(*handler));
    handler->on_req = canal__on_req;
    /* h2o calls its path's loggers when it is done with a request: canal's ends it there */
    h2o_logger_t *done = h2o_create_logger(app->pathconf, sizeof(*done));
    done->log_access = canal__on_req_done;
    return app;
}

void canal_app_destroy(canal_app_t *app)
{
    if (app == NULL)
        return;
    if (atomic_load(&app->state) == APP_STARTED || atomic_load(&app->state) == APP_STOPPING) {
        canal_app_stop(app);
        if (canal_app_wait(app) == CANAL_ESTATE) {
            /* another thread is in canal_app_wait(): let it finish the shutdown */
            while (atomic_load(&app->state) != APP_STOPPED)
                sched_yield();
        }
    }
    canal_router_destroy(app->router);
    canal__endpoints_dispose(app);
    canal__features_dispose(app);
    if (app->hostconf != NULL)
        h2o_config_dispose(&app->globalconf);
    for (size_t i = 0; i < app->nlisteners; i++) {
        free(app->listeners[i].host);
        free(app->listeners[i].path);
        free(app->listeners[i].fds);
        if (app->listeners[i].ssl_ctx != NULL)
            SSL_CTX_free(app->listeners[i].ssl_ctx);
        canal__tls_dispose(app->listeners[i].tls);
    }
    free(app->listeners);
    for (size_t k = 0; app->workers != NULL && k < app->nworkers; k++) {
        canal__worker_async_free(&app->workers[k]);
        canal__features_worker_free(&app->workers[k]);
    }
    free(app->workers);
    if (app->start_sync) {
        pthread_cond_destroy(&app->start_cond);
        pthread_mutex_destroy(&app->start_lock);
    }
    for (int i = 0; i < 2; i++) {
        if (app->stop_pipe[i] >= 0)
            close(app->stop_pipe[i]);
        if (app->reload_pipe[i] >= 0)
            close(app->reload_pipe[i]);
    }
    free(app->host);
    free(app->access_log);
    free(app->tls_cert);
    free(app->tls_key);
    free(app->trusted_proxies);
    free(app->listen);
    free(app->unix_owner);
    free(app->timers);
    free(app->proxies);
    free(app);
}

const canal_config_t *canal_app_config(const canal_app_t *app)
{
    return &app->cfg;
}

int canal_app_start(canal_app_t *app)
{
    int expected = APP_CREATED;
    if (app->reg_err.code != 0) {
        canal__log(app, CANAL_LOG_ERROR, "not started: a registration failed: %s", app->reg_err.message);
        return app->reg_err.code;
    }
    if (!atomic_compare_exchange_strong(&app->state, &expected, APP_STARTED))
        return CANAL_ESTATE;
    /* the default listener (host and port, or cfg.listen) unless added ones or sockets from
     * systemd take its place */
    int explicit = app->nlisteners > 0, inherited = canal__listeners_adopt(app);
    if (inherited < 0)
        goto fail;
    if (!explicit && inherited == 0) {
        canal_error_info_t err;
        if (app->cfg.listen != NULL
                ? canal__listener_add_unix(app, app->cfg.listen + 5, app->cfg.unix_mode, app->cfg.unix_owner, &err) != 0
                : canal__listener_add(app, app->cfg.host, app->cfg.port) != 0) {
            if (app->cfg.listen != NULL)
                canal__log(app, CANAL_LOG_ERROR, "%s", err.message);
            goto fail;
        }
    }
    if (app->cfg.listen == NULL && app->cfg.unix_owner != NULL) {
        canal__log(app, CANAL_LOG_ERROR, "a unix socket owner was given without a unix socket (--listen unix:PATH)");
        goto fail;
    }
    if (app->cfg.tls_port == 0 && (app->cfg.tls_cert != NULL || app->cfg.tls_key != NULL)) {
        canal__log(app, CANAL_LOG_ERROR, "a certificate or key was given without a TLS port (--tls-port)");
        goto fail;
    }
    if (app->cfg.tls_port != 0) {
        canal_error_info_t err;
        if (canal__listener_add_tls(app, app->cfg.host, app->cfg.tls_port, app->cfg.tls_cert, app->cfg.tls_key, &err) != 0) {
            canal__log(app, CANAL_LOG_ERROR, "%s", err.message);
            goto fail;
        }
    }
    app->nworkers = app->cfg.threads;
    if (pipe2(app->stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0 || pipe2(app->reload_pipe, O_CLOEXEC | O_NONBLOCK) != 0 ||
        (app->workers = calloc(app->nworkers, sizeof(*app->workers))) == NULL)
        goto fail;

    /* a socket per worker for each listener (listen.c); port 0: the first bind picks */
    for (size_t i = 0; i < app->nlisteners; i++)
        if (canal__listener_bind(app, &app->listeners[i]) != 0)
            goto fail;
    signal(SIGPIPE, SIG_IGN);
    json_object_seed(0);

    /* the endpoints' guards and heads, the features' settings (they have logged a failure) */
    if (canal__endpoints_start(app) != 0 || canal__features_start(app) != 0)
        goto fail;
    /* registered last, so it runs first: gzip (compress.c) sees the rewritten answer */
    canal__h2o_errors_as_problems(app);
    if (canal__offload_start(app) != 0) {
        canal__log(app, CANAL_LOG_ERROR, "cannot start the offload threads, or a thread_init hook failed");
        goto fail;
    }
    for (size_t k = 0; k < app->nworkers; k++)
        if (canal__worker_prepare(app, k) != 0)
            goto fail;
    if (pthread_mutex_init(&app->start_lock, NULL) != 0)
        goto fail;
    if (pthread_cond_init(&app->start_cond, NULL) != 0) {
        pthread_mutex_destroy(&app->start_lock);
        goto fail;
    }
    app->start_sync = 1;
    size_t created = 0;
    for (; created < app->nworkers; created++)
        if (pthread_create(&app->workers[created].thread, NULL, canal__worker_main, &app->workers[created]) != 0) {
            canal__log(app, CANAL_LOG_ERROR, "cannot start worker thread %zu: %s", created, strerror(errno));
            break;
        }
    /* each worker makes its loop and context, then says so: a stop can reach it from now on */
    pthread_mutex_lock(&app->start_lock);
    while (app->nstarted < created)
        pthread_cond_wait(&app->start_cond, &app->start_lock);
    pthread_mutex_unlock(&app->start_lock);
    int failed = created < app->nworkers;
    for (size_t k = 0; k < created; k++)
        if (app->workers[k].started < 0) {
            canal__log(app, CANAL_LOG_ERROR, "cannot create the event loop of worker %zu", k);
            failed = 1;
        }
    if (!failed)
        return 0;
    /* the workers that run leave at once (no connection is theirs yet to drain) */
    atomic_store(&app->force, 1);
    for (size_t k = 0; k < created; k++)
        if (app->workers[k].started > 0)
            h2o_multithread_send_message(&app->workers[k].stop_receiver, &app->workers[k].stop_message);
    for (size_t k = 0; k < created; k++)
        pthread_join(app->workers[k].thread, NULL);

fail:
    for (size_t k = 0; app->workers != NULL && k < app->nworkers; k++) {
        struct canal_worker *w = &app->workers[k];
        canal__worker_async_free(w);
        canal__features_worker_free(w);
        free(w->socks);
    }
    canal__listeners_close(app);
    free(app->workers);
    app->workers = NULL;
    if (app->offload.max_queued > 0)
        canal__offload_stop(app);
    atomic_store(&app->state, APP_STOPPED);
    return CANAL_ESYS;
}

void canal_app_reopen_log(canal_app_t *app)
{
    /* the features' reopen hooks set a flag each: safe in a signal handler */
    for (size_t i = 0; i < app->nfeatures; i++)
        if (app->features[i].f->reopen != NULL)
            app->features[i].f->reopen(app, app->features[i].state);
}

/* The app that the signal handlers stop: the one waiting with signals on. */
static canal_app_t *volatile signal_app;

static void on_signal(int sig)
{
    if (signal_app == NULL)
        return;
    if (sig == SIGUSR1) {
        canal_app_reopen_log(signal_app);
    } else if (sig == SIGHUP) {
        int saved = errno; /* canal_app_wait() reloads: a signal handler may not */
        ssize_t rc = write(signal_app->reload_pipe[1], "r", 1);
        (void)rc; /* a full pipe means a reload is pending already */
        errno = saved;
    } else
        canal_app_stop(signal_app);
}

void canal_app_stop(canal_app_t *app)
{
    if (app->stop_pipe[1] >= 0) { /* started */
        atomic_store(&app->timers_stopped, 1); /* timer.c: no timer calls the app from now on */
        ssize_t rc = write(app->stop_pipe[1], "x", 1);
        (void)rc; /* a full pipe means a stop is pending already */
    }
}

int canal_app_wait(canal_app_t *app)
{
    int expected = APP_STARTED;
    if (!atomic_compare_exchange_strong(&app->state, &expected, APP_STOPPING))
        return CANAL_ESTATE;
    /* SIGUSR1 reopens the logs (logrotate's postrotate); SIGHUP reloads the configuration
     * (canal_app_reload()), here on this thread, until a stop */
    struct sigaction old_int, old_term, old_usr1, old_hup, sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    if (!app->cfg.no_signals) {
        signal_app = app;
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        sigaction(SIGUSR1, &sa, &old_usr1);
        sigaction(SIGHUP, &sa, &old_hup);
    }
    struct pollfd pfd = {.fd = app->stop_pipe[0], .events = POLLIN};
    struct pollfd both[2] = {pfd, {.fd = app->reload_pipe[0], .events = POLLIN}};
    char drain[16];
    for (;;) {
        if (poll(both, 2, -1) < 0 && errno == EINTR)
            continue; /* a signal, whose byte is in a pipe */
        if (both[0].revents == 0 && both[1].revents == 0)
            break; /* poll failed: stop, as a stop would */
        if (both[0].revents != 0)
            break;
        if (both[1].revents != 0 && read(app->reload_pipe[0], drain, sizeof(drain)) > 0) {
            while (read(app->reload_pipe[0], drain, sizeof(drain)) > 0)
                ; /* SIGHUPs that came together are one reload */
            if (app->reload != NULL)
                app->reload(app);
            else
                canal__log(app, CANAL_LOG_WARN, "SIGHUP: nothing to reload (only apps of canal_app_create() reload)");
        }
    }
    /* Empty the pipe before saying so: a stop that comes after draining shows must end the
     * delay below, not be swallowed here. */
    while (read(app->stop_pipe[0], drain, sizeof(drain)) > 0)
        ;
    atomic_store(&app->draining, 1);
    if (app->cfg.shutdown_delay_ms > 0) {
        /* Keep serving while readiness says 503. The signal handlers stay installed, so a
         * second SIGTERM (or canal_app_stop()) ends the wait instead of killing the process. */
        canal__log(app, CANAL_LOG_INFO, "stopping: readiness answers 503; still serving for %u ms",
                   app->cfg.shutdown_delay_ms);
        uint64_t until = canal__now_ms() + app->cfg.shutdown_delay_ms, now;
        while ((now = canal__now_ms()) < until) {
            int rc = poll(&pfd, 1, (int)(until - now));
            if (rc > 0 || (rc < 0 && errno != EINTR))
                break;
        }
        while (read(app->stop_pipe[0], drain, sizeof(drain)) > 0)
            ; /* the stop that cut the delay short does not also cut the drain short */
    }

    for (size_t k = 0; k < app->nworkers; k++)
        h2o_multithread_send_message(&app->workers[k].stop_receiver, &app->workers[k].stop_message);
    /* The signal handlers stay while the workers drain: a second stop (a second SIGTERM, or
     * canal_app_stop() again) makes them leave at once, as the deadline would. */
    for (;;) {
        size_t done = 0;
        for (size_t k = 0; k < app->nworkers; k++)
            done += atomic_load(&app->workers[k].done) != 0;
        if (done == app->nworkers)
            break;
        if (poll(&pfd, 1, 20) > 0 && read(app->stop_pipe[0], drain, sizeof(drain)) > 0 &&
            !atomic_exchange(&app->force, 1))
            canal__log(app, CANAL_LOG_WARN, "stopped again: leaving without waiting for the requests in flight");
    }
    if (!app->cfg.no_signals) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        sigaction(SIGUSR1, &old_usr1, NULL);
        sigaction(SIGHUP, &old_hup, NULL);
        signal_app = NULL;
    }
    for (size_t k = 0; k < app->nworkers; k++) {
        struct canal_worker *w = &app->workers[k];
        pthread_join(w->thread, NULL);
        free(w->socks);
    }
    canal__offload_stop(app);
    canal__listeners_close(app);
    atomic_store(&app->state, APP_STOPPED);
    return 0;
}

size_t canal_app_worker_count(const canal_app_t *app)
{
    return app->workers != NULL ? app->nworkers : app->cfg.threads;
}

uint64_t canal_app_worker_requests(const canal_app_t *app, size_t i)
{
    return app->workers != NULL && i < app->nworkers ? atomic_load(&app->workers[i].requests) : 0;
}

int canal_app_draining(const canal_app_t *app)
{
    return atomic_load(&app->draining);
}

int canal_app_run(canal_app_t *app)
{
    int rc = canal_app_start(app);
    return rc != 0 ? rc : canal_app_wait(app);
}
