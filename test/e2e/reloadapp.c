/* SPDX-License-Identifier: MIT */
/*
 * canal-reloadapp: the app of test/e2e/reload.sh. Its settings come from canal_config_load()
 * (a --config file, the environment, the flags), two of them its own options; SIGHUP reloads.
 *
 *   GET  /greet         the --greeting, as the last reload left it
 *   POST /login         204 and a session cookie signed with the --secret
 *   GET  /me            200 for a session cookie that verifies, else 401
 *   GET  /slow          answers once the file --release names exists (an offloaded wait),
 *                       after writing the file --started names: a request in flight
 *   GET  /limited       --rate requests per minute per client address: 200, or 429
 *   GET  /jwt           200 for a Bearer JWT (HS256) signed with --jwt-secret, else 401
 * and CORS on /greet for the --cors-origin.
 *
 * Its reload hook takes the new greeting, the new rate, a new JWT secret (the scheme's keys
 * replaced), the new CORS origin, and a new secret as a new signer of two keys, the
 * new one first and the one before it after: a cookie signed before one reload still
 * verifies, one signed two reloads ago does not.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <canal.h>

static const char *greeting, *secret, *started, *release;
static _Atomic(const char *) current_greeting;
static canal_sessions_t *sessions;
static canal_rate_limit_t *limit;
static size_t rate;
static const char *jwt_secret;
static canal_auth_t *jwt;
static canal_policy_t jwt_policy;
static const char *cors_origin;
static canal_cors_t cors = {.methods = "GET"};
/* every signer made: a request may still use one a reload replaced, until the app is gone */
static canal_signer_t *signers[16];
static size_t nsigners;
static const char *last_secret;

static const canal_option_t options[] = {
    {"greeting", CANAL_OPTION_STRING, &greeting, "hello", .meta = "TEXT", .help = "what GET /greet says"},
    {"secret", CANAL_OPTION_STRING, &secret, NULL, .help = "the session cookies' key (16 bytes or more)"},
    {"started", CANAL_OPTION_STRING, &started, NULL, .meta = "FILE", .help = "GET /slow writes it"},
    {"release", CANAL_OPTION_STRING, &release, NULL, .meta = "FILE", .help = "GET /slow waits for it"},
    {"jwt-secret", CANAL_OPTION_STRING, &jwt_secret, "a JWT secret of 32 bytes or more!", .help = "HS256 key of GET /jwt"},
    {"cors-origin", CANAL_OPTION_STRING, &cors_origin, "https://a.example", .help = "the origin CORS allows"},
    {"rate", CANAL_OPTION_NUMBER, &rate, "100", .min = 1, .max = 1000000, .help = "GET /limited's requests a minute"},
};

/* a signer of the new secret, then the one before it (if any) */
static canal_signer_t *make_signer(const char *now, const char *before, canal_error_info_t *err)
{
    canal_str_t keys[2] = {{now, strlen(now)}, {before ? before : "", before ? strlen(before) : 0}};
    if (nsigners == sizeof(signers) / sizeof(signers[0]))
        return NULL;
    canal_signer_t *s = canal_signer_create(keys, before ? 2 : 1, err);
    if (s != NULL)
        signers[nsigners++] = s;
    return s;
}

static canal_jwt_config_t jwt_config(const char *key)
{
    canal_jwt_config_t c = {.issuer = "https://issuer.test", .audience = "canal-test"};
    c.keys[0] = (canal_jwt_key_t){.alg = CANAL_JWT_HS256, .secret = key, .secret_len = strlen(key)};
    return c;
}

static int on_reload(canal_app_t *app, const canal_config_t *next, void *data)
{
    const char *js;
    canal_config_value(next, "jwt-secret", &js);
    canal_error_info_t jerr;
    canal_jwt_config_t jc = jwt_config(js != NULL ? js : "");
    if (canal_auth_jwt_reload(jwt, &jc, &jerr) != 0) {
        canal_app_log(app, CANAL_LOG_ERROR, "reload: --jwt-secret kept: %s", jerr.message);
        return -1;
    }
    const char *g, *s;
    canal_config_value(next, "greeting", &g);
    canal_config_value(next, "secret", &s);
    atomic_store(&current_greeting, g != NULL ? g : ""); /* next's strings live as long as the app */
    const char *o;
    canal_config_value(next, "cors-origin", &o);
    cors.origins = o;
    if (o == NULL || canal_app_cors_reload(app, &cors) != 0) {
        canal_app_log(app, CANAL_LOG_ERROR, "reload: --cors-origin kept");
        return -1;
    }
    size_t r;
    canal_config_value(next, "rate", &r);
    canal_rate_limit_set(limit, (uint32_t)r, 60000);
    if (s != NULL && strcmp(s, last_secret) != 0) {
        canal_error_info_t err;
        canal_signer_t *signer = make_signer(s, last_secret, &err);
        if (signer == NULL) {
            canal_app_log(app, CANAL_LOG_ERROR, "reload: --secret kept: %s", nsigners == 16 ? "too many" : err.message);
            return -1;
        }
        canal_sessions_set_signer(sessions, signer);
        last_secret = s;
    }
    return 0;
}

static int greet(canal_req_t *req, void *data)
{
    return canal_res_text(req, 200, atomic_load(&current_greeting));
}

/* /note?warn: a log line "note warn" (or "note info" without the query) before the answer */
static int note(canal_req_t *req, void *data)
{
    int warn = canal_req_query_string(req).len > 0;
    canal_log(req, warn ? CANAL_LOG_WARN : CANAL_LOG_INFO, "note %s", warn ? "warn" : "info");
    return canal_res_text(req, 200, "noted");
}

static int login(canal_req_t *req, void *data)
{
    int rc = canal_session_begin(req, sessions, (canal_str_t){"alice", 5});
    return rc != 0 ? canal_req_fail(req, "session: %s", canal_strerror(rc)) : canal_res_status(req, 204);
}

static int limited(canal_req_t *req, void *data)
{
    return canal_res_text(req, 200, "ok\n");
}

static int me(canal_req_t *req, void *data)
{
    canal_str_t user;
    if (canal_session_get(req, sessions, &user) != 0)
        return canal_res_problem(req, 401, "no valid session");
    return canal_res_text(req, 200, "alice\n");
}

static void wait_release(void *data)
{
    FILE *f = fopen(started, "w");
    if (f != NULL)
        fclose(f);
    while (access(release, F_OK) != 0)
        usleep(10000);
}

static void slow_done(canal_req_t *req, void *data)
{
    if (req != NULL)
        canal_res_text(req, 200, "done\n");
}

static int slow(canal_req_t *req, void *data)
{
    if (started == NULL || release == NULL)
        return canal_res_problem(req, 404, "no --started and --release");
    return canal_offload(req, wait_release, slow_done, NULL);
}

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err;
    canal_config_init(&cfg);
    canal_config_options(&cfg, options, sizeof(options) / sizeof(options[0]), &err);
    int rc = canal_config_load(&cfg, &argc, argv, &err);
    if (rc != 0) {
        fprintf(rc == CANAL_EHELP ? stdout : stderr, "%s\n", err.message);
        canal_config_help(&cfg, 0, rc == CANAL_EHELP ? stdout : stderr);
        return rc == CANAL_EHELP ? 0 : 2;
    }
    if (argc > 1 || secret == NULL) {
        fprintf(stderr, "canal-reloadapp: %s\n", argc > 1 ? "no arguments but flags" : "--secret is needed");
        return 2;
    }
    atomic_init(&current_greeting, greeting != NULL ? greeting : "");
    canal_app_t *app = canal_app_create(&cfg);
    canal_signer_t *signer = make_signer(secret, NULL, &err);
    if (app == NULL || signer == NULL ||
        (sessions = canal_sessions_create(app, &(canal_sessions_options_t){.signer = signer}, &err)) == NULL) {
        fprintf(stderr, "canal-reloadapp: %s\n", signer == NULL || app != NULL ? err.message : "cannot create");
        return 1;
    }
    last_secret = secret;
    limit = canal_rate_limit_create(app, &(canal_rate_limit_options_t){.requests = (uint32_t)rate, .window_ms = 60000},
                                    &err);
    if (limit == NULL) {
        fprintf(stderr, "canal-reloadapp: %s\n", err.message);
        return 1;
    }
    canal_jwt_config_t jc = jwt_config(jwt_secret != NULL ? jwt_secret : "");
    if ((jwt = canal_auth_jwt(&jc, &err)) == NULL) {
        fprintf(stderr, "canal-reloadapp: --jwt-secret: %s\n", err.message);
        return 1;
    }
    jwt_policy.schemes[0] = jwt;
    canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "/jwt", .handler = limited, .options = {CANAL_POLICY(&jwt_policy)}},
                    NULL, NULL);
    canal_app_route(app, &(canal_endpoint_spec_t){.tmpl = "/limited", .handler = limited, .options = {CANAL_RATE_LIMIT(limit)}},
                    NULL, NULL);
    canal_app_on_reload(app, on_reload, NULL);
    canal_app_get(app, "/greet", greet, NULL);
    cors.origins = cors_origin;
    canal_app_cors(app, "/greet", &cors);
    canal_app_post(app, "/login", login, NULL);
    canal_app_get(app, "/me", me, NULL);
    canal_app_get(app, "/slow", slow, NULL);
    canal_app_get(app, "/note", note, NULL);
    if (canal_app_error(app, &err) != 0 || canal_app_start(app) != 0) {
        fprintf(stderr, "canal-reloadapp: cannot start\n");
        canal_app_destroy(app);
        return 1;
    }
    fprintf(stderr, "canal-reloadapp listening on http://%s:%u\n", cfg.host, canal_app_port(app, 0));
    rc = canal_app_wait(app);
    canal_app_destroy(app);
    canal_auth_destroy(jwt);
    for (size_t i = 0; i < nsigners; i++)
        canal_signer_destroy(signers[i]);
    return rc == 0 ? 0 : 1;
}
