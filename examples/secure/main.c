/* SPDX-License-Identifier: MIT */
/*
 * canal-secure: the flags of issue 18's contract beside canal's own, the secret files, the
 * schemes, sessions and rate limit, then both modes' routes (secure.h).
 *
 *   build/bin/canal-secure --host 127.0.0.1 --port 8080 --threads 4 \
 *       --jwt-hs256-secret FILE --jwt-rs256-public-key FILE --jwt-es256-public-key FILE \
 *       --jwt-issuer https://issuer.test --jwt-audience canal-test --api-key FILE \
 *       --basic-user alice --basic-password FILE --cookie-secret FILE \
 *       --cookie-secret-other FILE --rate 5 --window 2 [--tls-port N --cert FILE --key FILE]
 *
 * A secret file is its exact bytes less one trailing newline (canal_secret_read()). A JWT
 * flag left out refuses its algorithm everywhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "secure.h"

/* The contract's own flags, each taking a value: options of the app's beside canal's, so each
 * also has its CANAL_ variable and a key in a --config file. */
struct flags {
    const char *hs256, *rs256, *es256, *issuer, *audience, *api_key, *user, *password, *cookie, *cookie_other;
    const char *rate, *window;
};

static struct flags f;

static const canal_option_t options[] = {
    {"jwt-hs256-secret", CANAL_OPTION_STRING, &f.hs256, .meta = "FILE", .help = "HS256 secret; none: refused"},
    {"jwt-rs256-public-key", CANAL_OPTION_STRING, &f.rs256, .meta = "FILE", .help = "RS256 public key (PEM)"},
    {"jwt-es256-public-key", CANAL_OPTION_STRING, &f.es256, .meta = "FILE", .help = "ES256 public key (PEM)"},
    {"jwt-issuer", CANAL_OPTION_STRING, &f.issuer, .meta = "URL", .help = "the tokens' iss (required)"},
    {"jwt-audience", CANAL_OPTION_STRING, &f.audience, .help = "the tokens' aud (required)"},
    {"api-key", CANAL_OPTION_STRING, &f.api_key, .meta = "FILE", .help = "the API key (required)"},
    {"basic-user", CANAL_OPTION_STRING, &f.user, .meta = "NAME", .help = "Basic user (required)"},
    {"basic-password", CANAL_OPTION_STRING, &f.password, .meta = "FILE", .help = "Basic password (required)"},
    {"cookie-secret", CANAL_OPTION_STRING, &f.cookie, .meta = "FILE", .help = "cookie key (required)"},
    {"cookie-secret-other", CANAL_OPTION_STRING, &f.cookie_other, .meta = "FILE",
     .help = "the other sessions' cookie key (required)"},
    {"rate", CANAL_OPTION_STRING, &f.rate, .meta = "R", .help = "requests per window (required)"},
    {"window", CANAL_OPTION_STRING, &f.window, .meta = "SECONDS", .help = "the rate's window (required)"},
};

static int required_flags(void)
{
    const char *required[] = {f.issuer, f.audience, f.api_key, f.user, f.password, f.cookie,
                              f.cookie_other, f.rate, f.window};
    for (size_t k = 0; k < sizeof(required) / sizeof(required[0]); k++)
        if (required[k] == NULL) {
            fprintf(stderr, "canal-secure: --jwt-issuer, --jwt-audience, --api-key, --basic-user, --basic-password, "
                            "--cookie-secret, --cookie-secret-other, --rate and --window are required\n");
            return -1;
        }
    return 0;
}

/* R and W: whole numbers, W in seconds (fractions allowed: "0.5"). */
static int read_rate(const struct flags *fl, uint32_t *requests, uint32_t *window_ms)
{
    char *end;
    unsigned long r = strtoul(fl->rate, &end, 10);
    if (*fl->rate == '\0' || *end != '\0' || r == 0 || r > 1000000)
        return -1;
    double w = strtod(fl->window, &end);
    if (*fl->window == '\0' || *end != '\0' || !(w >= 0.001 && w <= 86400))
        return -1;
    *requests = (uint32_t)r;
    *window_ms = (uint32_t)(w * 1000 + 0.5);
    return 0;
}

/* A JWT scheme of cfg's keys. With none (every JWT flag left out, or /hs/me without
 * --jwt-hs256-secret) the route must still refuse every token with the Bearer challenges, so
 * the scheme gets an HS256 key of 32 random bytes that no one knows. */
static canal_auth_t *jwt_scheme(canal_jwt_config_t *cfg, canal_error_info_t *err)
{
    unsigned char unknown[32];
    if (cfg->keys[0].alg == CANAL_JWT_NONE) {
        FILE *r = fopen("/dev/urandom", "rb");
        size_t n = r ? fread(unknown, 1, sizeof(unknown), r) : 0;
        if (r)
            fclose(r);
        if (n != sizeof(unknown)) {
            canal_error_set(err, CANAL_ESYS, 0, "/dev/urandom cannot be read");
            return NULL;
        }
        cfg->keys[0] = (canal_jwt_key_t){.alg = CANAL_JWT_HS256, .secret = unknown, .secret_len = sizeof(unknown)};
    }
    return canal_auth_jwt(cfg, err); /* copies the key */
}

int main(int argc, char **argv)
{
    canal_config_t cfg;
    canal_error_info_t err = {0};
    canal_config_init(&cfg);
    canal_config_options(&cfg, options, sizeof(options) / sizeof(options[0]), &err);
    /* A header section of 16 KiB is served (canal counts names and values); 64 KiB is 431. */
    cfg.max_header_bytes = 32768;
    /* The contract's paths exactly: "/PUBLIC" and "/public/" are not "/public" (404). */
    cfg.router.case_sensitive = 1;
    cfg.router.trailing_slash = CANAL_SLASH_STRICT;
    if (canal_config_load(&cfg, &argc, argv, &err) != 0) { /* --config FILE, CANAL_*, flags */
        FILE *out = err.code == CANAL_EHELP ? stdout : stderr;
        fprintf(out, "%s\n", err.message);
        canal_config_help(&cfg, 0, out);
        return err.code == CANAL_EHELP ? 0 : 2;
    }
    uint32_t requests, window_ms;
    if (argc > 1) {
        fprintf(stderr, "canal-secure: %s is not a flag\n", argv[1]);
        return 2;
    }
    if (required_flags() != 0)
        return 2;
    if (read_rate(&f, &requests, &window_ms) != 0) {
        fprintf(stderr, "canal-secure: --rate is 1 to 1000000 requests, --window 0.001 to 86400 seconds\n");
        return 2;
    }

    canal_str_t hs = {NULL, 0}, key = {NULL, 0}, password = {NULL, 0}, cookie = {NULL, 0}, cookie_other = {NULL, 0};
    secure_t s = {0};
    canal_signer_t *signer = NULL, *signer_other = NULL;
    canal_mvc_t *mvc = NULL;
    canal_app_t *app = NULL;
    int rc = (f.hs256 && canal_secret_read(f.hs256, &hs, &err)) || canal_secret_read(f.api_key, &key, &err) ||
             canal_secret_read(f.password, &password, &err) || canal_secret_read(f.cookie, &cookie, &err) ||
             canal_secret_read(f.cookie_other, &cookie_other, &err);
    if (rc == 0) {
        /* /me takes every configured key, /hs/me the HS256 secret alone: each key verifies
         * its own algorithm only, whatever a token's header says. */
        canal_jwt_config_t all = {.issuer = f.issuer, .audience = f.audience, .leeway = 30}, hs_only = all;
        size_t n = 0;
        if (f.hs256)
            all.keys[n++] = hs_only.keys[0] = (canal_jwt_key_t){.alg = CANAL_JWT_HS256, .secret = hs.base, .secret_len = hs.len};
        if (f.rs256)
            all.keys[n++] = (canal_jwt_key_t){.alg = CANAL_JWT_RS256, .pem_file = f.rs256};
        if (f.es256)
            all.keys[n++] = (canal_jwt_key_t){.alg = CANAL_JWT_ES256, .pem_file = f.es256};
        rc = (s.jwt = jwt_scheme(&all, &err)) == NULL || (s.jwt_hs = jwt_scheme(&hs_only, &err)) == NULL ||
             (s.api_key = canal_auth_api_key(&(canal_api_key_config_t){.key = key.base, .key_len = key.len,
                                                                        .realm = "canal-secure"}, &err)) == NULL ||
             (s.basic = canal_auth_basic(&(canal_basic_config_t){.user = f.user, .password = password.base,
                                                                 .password_len = password.len,
                                                                 .realm = "canal-secure"}, &err)) == NULL ||
             (signer = canal_signer_create(&cookie, 1, &err)) == NULL ||
             (signer_other = canal_signer_create(&cookie_other, 1, &err)) == NULL;
    }
    if (rc == 0) {
        app = canal_app_create(&cfg);
        rc = app == NULL ||
             (s.sessions = canal_sessions_create(app, &(canal_sessions_options_t){.signer = signer}, &err)) == NULL ||
             (s.sessions_other = canal_sessions_create(app, &(canal_sessions_options_t){.signer = signer_other}, &err)) == NULL ||
             (s.cookie = canal_auth_session(&(canal_session_auth_config_t){.sessions = s.sessions, .name = "Cookie",
                                                                           .challenge = "Cookie realm=\"canal-secure\""},
                                            &err)) == NULL ||
             (s.cookie_other = canal_auth_session(&(canal_session_auth_config_t){.sessions = s.sessions_other,
                                                                                 .name = "Cookie",
                                                                                 .challenge = "Cookie realm=\"canal-secure\""},
                                                  &err)) == NULL ||
             (s.limit = canal_rate_limit_create(app, &(canal_rate_limit_options_t){.requests = requests, .window_ms = window_ms,
                                                                                   .name = "limited"}, &err)) == NULL ||
             /* the preset on every answer of the app, 404 and 405 included; HSTS on TLS only */
             canal_app_security_headers(app, NULL, &(canal_security_headers_t){0}) != 0 ||
             secure_router_mode(app, &s, &err) != 0 ||
             (mvc = canal_mvc_create(app)) == NULL ||
             secure_controller_mode(mvc, &s, &err) != 0 ||
             canal_app_start(app) != 0;
        if (rc && app != NULL && err.message[0] == '\0')
            canal_app_error(app, &err);
    }
    if (rc) {
        fprintf(stderr, "canal-secure: %s\n", err.message[0] ? err.message : "out of memory");
    } else {
        printf("canal-secure listening on http://%s:%u\n", cfg.host, canal_app_port(app, 0));
        fflush(stdout);
        rc = canal_app_wait(app) != 0;
    }
    canal_app_destroy(app);
    canal_mvc_destroy(mvc);
    canal_auth_destroy(s.jwt);
    canal_auth_destroy(s.jwt_hs);
    canal_auth_destroy(s.api_key);
    canal_auth_destroy(s.basic);
    canal_auth_destroy(s.cookie);
    canal_auth_destroy(s.cookie_other);
    canal_signer_destroy(signer);
    canal_signer_destroy(signer_other);
    canal_secret_free(&hs);
    canal_secret_free(&key);
    canal_secret_free(&password);
    canal_secret_free(&cookie);
    canal_secret_free(&cookie_other);
    return rc ? 1 : 0;
}
