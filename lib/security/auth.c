/* SPDX-License-Identifier: MIT */
/*
 * Authentication schemes, the principal, and policies (canal/auth.h, docs/security.md).
 *
 * One place in the request path uses this file: dispatch() in req.c calls
 * canal__policy_refused() for a matched route whose endpoint has a policy, after the CORS
 * work and before the handler (in controller mode, before the filters and the binding). A
 * route without one pays one pointer test. The policy's schemes are tried in order; each
 * looks only at its own credentials and says NONE, OK, REFUSED or MALFORMED. The first OK
 * gives the request its principal; then the policy's scopes, roles and predicate decide
 * between the handler and a 403. With no OK, the worst outcome answers (a 400 for MALFORMED,
 * else a 401), with every scheme's challenge.
 *
 * The principal lives in request memory (h2o's pool), with a destructor that releases its
 * JWT claims when the request ends. Its scopes and subject point into those claims or into
 * the scheme, which outlives the app.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <openssl/crypto.h>
#include "security/security.h"
#include "models/models.h" /* canal__is_tchar() */
#include "canal/redis.h" /* canal_redis_unavailable() */
#include "canal/session.h"

enum auth_kind { AUTH_JWT, AUTH_API_KEY, AUTH_BASIC, AUTH_SESSION, AUTH_CUSTOM };

/* A JWT scheme's keys and claims' rules, replaced whole by canal_auth_jwt_reload(): a request
 * reads the current ones once; the ones before stay (a request may hold them) until the scheme
 * goes. */
struct jwt_keys {
    struct jwt_keys *older;
    struct canal__jwt jwt;
};

struct canal_auth {
    enum auth_kind kind;
    char *name;      /* OpenAPI's name, and a custom scheme's principal scheme */
    char *challenge; /* the WWW-Authenticate value without an error, or NULL */
    union {
        _Atomic(struct jwt_keys *) jwt;
        struct {
            char *header, *subject, *scopes;
            unsigned char *key;
            size_t key_len;
        } key;
        struct {
            canal_basic_fn verify;
            void *data;
            char *user;
            unsigned char *password;
            size_t password_len;
        } basic;
        canal_sessions_t *sessions;
        struct {
            canal_auth_fn fn;
            void *data;
            canal_credential_in_t in;
            char *param;       /* the header, parameter or cookie; or the HTTP scheme */
        } custom;
    } u;
};

struct canal_principal {
    canal_req_t *req;
    const char *scheme;
    canal_str_t subject;
    canal_str_t *scopes, *roles;
    size_t nscopes, nroles;
    json_t *claims;
};

/* ---- building schemes ---- */

/* A realm goes into a quoted-string: printable ASCII but '"' and '\'. */
static int realm_ok(const char *r)
{
    for (; *r; r++)
        if ((unsigned char)*r < 0x20 || (unsigned char)*r > 0x7e || *r == '"' || *r == '\\')
            return 0;
    return 1;
}

static canal_auth_t *new_auth(enum auth_kind kind, const char *name, const char *scheme, const char *realm,
                              canal_error_info_t *err)
{
    realm = realm ? realm : "canal";
    if (!realm_ok(realm)) {
        canal_error_set(err, CANAL_EINVAL, 0, "a realm is printable ASCII without '\"' or '\\'");
        return NULL;
    }
    canal_auth_t *a = calloc(1, sizeof(*a));
    char buf[512];
    snprintf(buf, sizeof(buf), "%s realm=\"%s\"%s", scheme, realm, kind == AUTH_BASIC ? ", charset=\"UTF-8\"" : "");
    if (a == NULL || (a->name = strdup(name)) == NULL || (a->challenge = strdup(buf)) == NULL) {
        canal_auth_destroy(a);
        canal_error_set(err, CANAL_ENOMEM, 0, NULL);
        return NULL;
    }
    a->kind = kind;
    return a;
}

canal_auth_t *canal_auth_jwt(const canal_jwt_config_t *cfg, canal_error_info_t *err)
{
    canal_auth_t *a = new_auth(AUTH_JWT, cfg->name ? cfg->name : "bearer", "Bearer", cfg->realm, err);
    struct jwt_keys *k = a != NULL ? calloc(1, sizeof(*k)) : NULL;
    if (a != NULL && (k == NULL || canal__jwt_init(&k->jwt, cfg, err) != 0)) {
        if (k == NULL)
            canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
        free(k);
        a->kind = AUTH_CUSTOM; /* nothing of the JWT's to free */
        canal_auth_destroy(a);
        return NULL;
    }
    if (a != NULL)
        atomic_init(&a->u.jwt, k);
    return a;
}

int canal_auth_jwt_reload(canal_auth_t *a, const canal_jwt_config_t *cfg, canal_error_info_t *err)
{
    if (a == NULL || a->kind != AUTH_JWT || cfg == NULL)
        return canal_error_set(err, CANAL_EINVAL, 0, "not a JWT scheme");
    struct jwt_keys *k = calloc(1, sizeof(*k));
    if (k == NULL)
        return canal_error_set(err, CANAL_ENOMEM, 0, "out of memory");
    int rc = canal__jwt_init(&k->jwt, cfg, err);
    if (rc != 0) {
        free(k);
        return rc;
    }
    struct jwt_keys *old = atomic_load(&a->u.jwt);
    do
        k->older = old;
    while (!atomic_compare_exchange_weak(&a->u.jwt, &old, k));
    return 0;
}

canal_auth_t *canal_auth_api_key(const canal_api_key_config_t *cfg, canal_error_info_t *err)
{
    if (cfg->key == NULL || cfg->key_len == 0) {
        canal_error_set(err, CANAL_EINVAL, 0, "an API key scheme needs a key");
        return NULL;
    }
    canal_auth_t *a = new_auth(AUTH_API_KEY, cfg->name ? cfg->name : "apiKey", "ApiKey", cfg->realm, err);
    if (a == NULL)
        return NULL;
    a->u.key.header = strdup(cfg->header ? cfg->header : "X-Api-Key");
    a->u.key.subject = strdup(cfg->subject ? cfg->subject : "api-key");
    a->u.key.scopes = strdup(cfg->scopes ? cfg->scopes : "");
    a->u.key.key = malloc(cfg->key_len);
    if (a->u.key.header == NULL || a->u.key.subject == NULL || a->u.key.scopes == NULL || a->u.key.key == NULL) {
        canal_auth_destroy(a);
        canal_error_set(err, CANAL_ENOMEM, 0, NULL);
        return NULL;
    }
    memcpy(a->u.key.key, cfg->key, cfg->key_len);
    a->u.key.key_len = cfg->key_len;
    return a;
}

canal_auth_t *canal_auth_basic(const canal_basic_config_t *cfg, canal_error_info_t *err)
{
    if (cfg->verify == NULL && (cfg->user == NULL || cfg->password == NULL)) {
        canal_error_set(err, CANAL_EINVAL, 0, "a Basic scheme needs a verify function or a user and a password");
        return NULL;
    }
    canal_auth_t *a = new_auth(AUTH_BASIC, cfg->name ? cfg->name : "basic", "Basic", cfg->realm, err);
    if (a == NULL)
        return NULL;
    a->u.basic.verify = cfg->verify;
    a->u.basic.data = cfg->data;
    if (cfg->verify == NULL) {
        a->u.basic.user = strdup(cfg->user);
        a->u.basic.password = malloc(cfg->password_len ? cfg->password_len : 1);
        if (a->u.basic.user == NULL || a->u.basic.password == NULL) {
            canal_auth_destroy(a);
            canal_error_set(err, CANAL_ENOMEM, 0, NULL);
            return NULL;
        }
        memcpy(a->u.basic.password, cfg->password, cfg->password_len);
        a->u.basic.password_len = cfg->password_len;
    }
    return a;
}

static int is_token(const char *s)
{
    if (s == NULL || *s == '\0')
        return 0;
    while (canal__is_tchar((unsigned char)*s))
        s++;
    return *s == '\0';
}

/* A scheme of kind with its name and challenge copied; NULL (err filled) when out of memory */
static canal_auth_t *scheme_new(enum auth_kind kind, const char *name, const char *challenge, canal_error_info_t *err)
{
    canal_auth_t *a = calloc(1, sizeof(*a));
    if (a != NULL)
        a->kind = kind;
    if (a == NULL || (a->name = strdup(name)) == NULL || (challenge != NULL && (a->challenge = strdup(challenge)) == NULL)) {
        canal_auth_destroy(a);
        canal_error_set(err, CANAL_ENOMEM, 0, NULL);
        return NULL;
    }
    return a;
}

canal_auth_t *canal_auth_custom(const canal_custom_auth_config_t *cfg, canal_error_info_t *err)
{
    int http = cfg->in == CANAL_CREDENTIAL_HTTP;
    if (cfg->name == NULL || cfg->name[0] == '\0' || cfg->authenticate == NULL) {
        canal_error_set(err, CANAL_EINVAL, 0, "a custom scheme needs a name and an authenticate function");
        return NULL;
    }
    if (cfg->in > CANAL_CREDENTIAL_COOKIE || (!http && !is_token(cfg->param)) ||
        (http && cfg->http_scheme != NULL && !is_token(cfg->http_scheme))) {
        canal_error_set(err, CANAL_EINVAL, 0, "custom scheme %s: %s", cfg->name,
                        http ? "its HTTP scheme is not a token" : "its credential's header, parameter or cookie needs a name, a token");
        return NULL;
    }
    canal_auth_t *a = scheme_new(AUTH_CUSTOM, cfg->name, cfg->challenge, err);
    if (a == NULL)
        return NULL;
    a->u.custom.fn = cfg->authenticate;
    a->u.custom.data = cfg->data;
    a->u.custom.in = cfg->in;
    const char *param = !http ? cfg->param : cfg->http_scheme != NULL ? cfg->http_scheme : cfg->name;
    if ((a->u.custom.param = strdup(param)) == NULL) {
        canal_auth_destroy(a);
        canal_error_set(err, CANAL_ENOMEM, 0, NULL);
        return NULL;
    }
    if (http) /* HTTP scheme names are case-insensitive; OpenAPI writes them lower-cased */
        for (char *c = a->u.custom.param; *c; c++)
            *c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
    return a;
}

canal_auth_t *canal_auth_session(const canal_session_auth_config_t *cfg, canal_error_info_t *err)
{
    if (cfg == NULL || cfg->sessions == NULL) {
        canal_error_set(err, CANAL_EINVAL, 0, "a session scheme needs the app's sessions");
        return NULL;
    }
    canal_auth_t *a = scheme_new(AUTH_SESSION, cfg->name ? cfg->name : "session", cfg->challenge, err);
    if (a != NULL)
        a->u.sessions = cfg->sessions;
    return a;
}

void canal_auth_destroy(canal_auth_t *a)
{
    if (a == NULL)
        return;
    switch (a->kind) {
    case AUTH_JWT:
        for (struct jwt_keys *k = atomic_load(&a->u.jwt), *older; k != NULL; k = older) {
            older = k->older;
            canal__jwt_dispose(&k->jwt);
            free(k);
        }
        break;
    case AUTH_API_KEY:
        free(a->u.key.header);
        free(a->u.key.subject);
        free(a->u.key.scopes);
        free(a->u.key.key);
        break;
    case AUTH_BASIC:
        free(a->u.basic.user);
        free(a->u.basic.password);
        break;
    case AUTH_CUSTOM:
        free(a->u.custom.param);
        break;
    case AUTH_SESSION:
        break;
    }
    free(a->name);
    free(a->challenge);
    free(a);
}

int canal_secret_equal(const void *a, size_t alen, const void *b, size_t blen)
{
    return alen == blen && CRYPTO_memcmp(a, b, alen) == 0;
}

int canal_secret_read(const char *path, canal_str_t *out, canal_error_info_t *err)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return canal_error_set(err, CANAL_ESYS, 0, "%s: %s", path, strerror(errno));
    /* Room for the limit, a "\r\n", and one byte more that tells a longer file. */
    char *buf = malloc(CANAL_SECRET_MAX_LENGTH + 3);
    if (buf == NULL) {
        fclose(f);
        return canal_error_set(err, CANAL_ENOMEM, 0, NULL);
    }
    size_t n = fread(buf, 1, CANAL_SECRET_MAX_LENGTH + 3, f);
    int bad = ferror(f);
    fclose(f);
    int rc = 0;
    if (bad)
        rc = canal_error_set(err, CANAL_ESYS, 0, "%s: cannot be read", path);
    else {
        if (n > 0 && n <= CANAL_SECRET_MAX_LENGTH + 2 && buf[n - 1] == '\n')
            n -= n > 1 && buf[n - 2] == '\r' ? 2 : 1;
        if (n > CANAL_SECRET_MAX_LENGTH)
            rc = canal_error_set(err, CANAL_ELIMIT, 0, "%s: longer than %d bytes", path, CANAL_SECRET_MAX_LENGTH);
        else if (n == 0)
            rc = canal_error_set(err, CANAL_EINVAL, 0, "%s: empty", path);
    }
    if (rc != 0) {
        OPENSSL_cleanse(buf, CANAL_SECRET_MAX_LENGTH + 3);
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = (canal_str_t){buf, n};
    return 0;
}

void canal_secret_free(canal_str_t *s)
{
    if (s == NULL || s->base == NULL)
        return;
    OPENSSL_cleanse((char *)s->base, s->len);
    free((char *)s->base);
    *s = (canal_str_t){NULL, 0};
}

/* ---- the principal ---- */

static void principal_dispose(void *p)
{
    json_decref(((canal_principal_t *)p)->claims);
}

static canal_principal_t *principal_new(canal_req_t *req, const char *scheme)
{
    canal_principal_t *p = h2o_mem_alloc_shared(&req->h2o->pool, sizeof(*p), principal_dispose);
    *p = (canal_principal_t){.req = req, .scheme = scheme, .subject = {"", 0}};
    return p;
}

/* Appends s to a list in request memory, growing it by doubling. */
static int list_add(canal_req_t *req, canal_str_t **list, size_t *n, canal_str_t s)
{
    if (*n == CANAL_PRINCIPAL_MAX_SCOPES)
        return CANAL_ELIMIT;
    if ((*n & (*n - 1)) == 0) { /* 0, 1, 2, 4, ...: full */
        canal_str_t *grown = canal_req_alloc(req, (*n ? 2 * *n : 1) * sizeof(*grown));
        if (*n)
            memcpy(grown, *list, *n * sizeof(*grown));
        *list = grown;
    }
    (*list)[(*n)++] = s;
    return 0;
}

/* Adds the space-separated tokens of s (borrowed: it outlives the request). */
static int add_tokens(canal_req_t *req, canal_str_t **list, size_t *n, const char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && s[j] != ' ')
            j++;
        if (j > i && list_add(req, list, n, (canal_str_t){s + i, j - i}) != 0)
            return CANAL_ELIMIT;
        i = j + 1;
    }
    return 0;
}

static int list_has(const canal_str_t *list, size_t n, const char *s, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (list[i].len == len && memcmp(list[i].base, s, len) == 0)
            return 1;
    return 0;
}

/* A request's own: who it was authenticated as */
static const char principal_key;

const canal_principal_t *canal_req_principal(const canal_req_t *req)
{
    canal_principal_t *const *p = canal__req_state_find(req, &principal_key);
    return p != NULL ? *p : NULL;
}

const char *canal_principal_scheme(const canal_principal_t *p)
{
    return p->scheme;
}

canal_str_t canal_principal_subject(const canal_principal_t *p)
{
    return p->subject;
}

size_t canal_principal_scope_count(const canal_principal_t *p)
{
    return p->nscopes;
}

canal_str_t canal_principal_scope_at(const canal_principal_t *p, size_t i)
{
    return i < p->nscopes ? p->scopes[i] : (canal_str_t){NULL, 0};
}

int canal_principal_has_scope(const canal_principal_t *p, const char *scope)
{
    return list_has(p->scopes, p->nscopes, scope, strlen(scope));
}

size_t canal_principal_role_count(const canal_principal_t *p)
{
    return p->nroles;
}

canal_str_t canal_principal_role_at(const canal_principal_t *p, size_t i)
{
    return i < p->nroles ? p->roles[i] : (canal_str_t){NULL, 0};
}

int canal_principal_has_role(const canal_principal_t *p, const char *role)
{
    return list_has(p->roles, p->nroles, role, strlen(role));
}

json_t *canal_principal_claim(const canal_principal_t *p, const char *name)
{
    return p->claims ? json_object_get(p->claims, name) : NULL;
}

json_t *canal_principal_claims(const canal_principal_t *p)
{
    return p->claims;
}

static canal_str_t req_copy(canal_req_t *req, canal_str_t s)
{
    char *c = canal_req_alloc(req, s.len + 1);
    memcpy(c, s.base, s.len);
    c[s.len] = '\0';
    return (canal_str_t){c, s.len};
}

void canal_principal_set_subject(canal_principal_t *p, canal_str_t subject)
{
    p->subject = req_copy(p->req, subject);
}

int canal_principal_add_scope(canal_principal_t *p, canal_str_t scope)
{
    return list_add(p->req, &p->scopes, &p->nscopes, req_copy(p->req, scope));
}

int canal_principal_add_role(canal_principal_t *p, canal_str_t role)
{
    return list_add(p->req, &p->roles, &p->nroles, req_copy(p->req, role));
}

int canal_principal_set_claims_new(canal_principal_t *p, json_t *claims)
{
    if (!json_is_object(claims)) {
        json_decref(claims);
        return CANAL_EINVAL;
    }
    json_decref(p->claims);
    p->claims = claims;
    return 0;
}

/* ---- reading credentials ---- */

void canal__auth_split(canal_str_t v, canal_str_t *scheme, canal_str_t *cred)
{
    size_t i = 0;
    while (i < v.len && v.base[i] != ' ')
        i++;
    *scheme = (canal_str_t){v.base, i};
    *cred = (canal_str_t){NULL, 0};
    if (i == v.len)
        return;
    while (i < v.len && v.base[i] == ' ')
        i++; /* 1*SP (RFC 9110 11.4) */
    *cred = (canal_str_t){v.base + i, v.len - i};
}

/* RFC 6750 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" */
int canal__b64token(canal_str_t s)
{
    size_t i = 0;
    while (i < s.len && (((s.base[i] | 32) >= 'a' && (s.base[i] | 32) <= 'z') || (s.base[i] >= '0' && s.base[i] <= '9') ||
                         strchr("-._~+/", s.base[i]) != NULL) && s.base[i] != '\0')
        i++;
    if (i == 0)
        return 0;
    while (i < s.len && s.base[i] == '=')
        i++;
    return i == s.len;
}

canal_str_t canal__trim_ows(canal_str_t v)
{
    while (v.len > 0 && (v.base[0] == ' ' || v.base[0] == '\t'))
        v.base++, v.len--;
    while (v.len > 0 && (v.base[v.len - 1] == ' ' || v.base[v.len - 1] == '\t'))
        v.len--;
    return v;
}

int canal__basic_decode(canal_str_t cred, unsigned char *raw, canal_str_t *user, canal_str_t *pass)
{
    size_t len;
    if (cred.base == NULL || canal__b64_decode(cred.base, cred.len, 0, raw, &len) != 0)
        return -1;
    const unsigned char *colon = memchr(raw, ':', len);
    if (colon == NULL)
        return -1;
    *user = (canal_str_t){(const char *)raw, (size_t)(colon - raw)};
    *pass = (canal_str_t){(const char *)colon + 1, len - user->len - 1};
    return canal_utf8_valid(*user) && canal_utf8_valid(*pass) ? 0 : -1;
}

/* The request's one Authorization field split into scheme and credentials: 1; 0 if there is
 * none; -1 if there are two or more. */
static int authorization(canal_req_t *req, canal_str_t *scheme, canal_str_t *cred)
{
    const h2o_headers_t *hs = &req->h2o->headers;
    ssize_t i = h2o_find_header(hs, H2O_TOKEN_AUTHORIZATION, -1);
    if (i < 0)
        return 0;
    if (h2o_find_header(hs, H2O_TOKEN_AUTHORIZATION, i) >= 0)
        return -1;
    canal__auth_split((canal_str_t){hs->entries[i].value.base, hs->entries[i].value.len}, scheme, cred);
    return 1;
}

static int scheme_is(canal_str_t s, const char *name)
{
    size_t n = strlen(name);
    return s.len == n && strncasecmp(s.base, name, n) == 0;
}

static canal_auth_result_t bearer(const canal_auth_t *a, canal_req_t *req, canal_principal_t *p, const char **why)
{
    canal_str_t scheme, tok;
    int n = authorization(req, &scheme, &tok);
    if (n < 0) {
        *why = "two Authorization fields";
        return CANAL_AUTH_MALFORMED;
    }
    if (n == 0 || !scheme_is(scheme, "Bearer"))
        return CANAL_AUTH_NONE;
    if (!canal__b64token(tok)) {
        *why = "the field is not Bearer and one b64token";
        return CANAL_AUTH_MALFORMED;
    }
    json_t *claims;
    const struct canal__jwt *jwt = &atomic_load_explicit(&a->u.jwt, memory_order_acquire)->jwt;
    if ((*why = canal__jwt_verify(jwt, tok.base, tok.len, (int64_t)time(NULL), &claims)) != NULL)
        return CANAL_AUTH_REFUSED;
    p->claims = claims; /* released with the request (principal_dispose) */
    const json_t *sub = json_object_get(claims, "sub"), *scope = json_object_get(claims, "scope"),
                 *roles = json_object_get(claims, jwt->roles_claim);
    p->subject = (canal_str_t){json_string_value(sub), json_string_length(sub)};
    if (json_is_string(scope) &&
        add_tokens(req, &p->scopes, &p->nscopes, json_string_value(scope), json_string_length(scope)) != 0) {
        *why = "too many scopes";
        return CANAL_AUTH_REFUSED;
    }
    size_t i;
    const json_t *r;
    json_array_foreach(roles, i, r)
    {
        if (json_is_string(r) &&
            list_add(req, &p->roles, &p->nroles, (canal_str_t){json_string_value(r), json_string_length(r)}) != 0) {
            *why = "too many roles";
            return CANAL_AUTH_REFUSED;
        }
    }
    return CANAL_AUTH_OK;
}

static canal_auth_result_t api_key(const canal_auth_t *a, canal_req_t *req, canal_principal_t *p, const char **why)
{
    const h2o_headers_t *hs = &req->h2o->headers;
    size_t nlen = strlen(a->u.key.header), found = 0;
    canal_str_t v = {NULL, 0};
    for (size_t i = 0; i < hs->size; i++)
        if (hs->entries[i].name->len == nlen && strncasecmp(hs->entries[i].name->base, a->u.key.header, nlen) == 0) {
            v = (canal_str_t){hs->entries[i].value.base, hs->entries[i].value.len};
            found++;
        }
    if (found == 0)
        return CANAL_AUTH_NONE;
    *why = "the API key is refused";
    if (found > 1)
        return CANAL_AUTH_REFUSED;
    v = canal__trim_ows(v);
    if (!canal_secret_equal(v.base, v.len, a->u.key.key, a->u.key.key_len))
        return CANAL_AUTH_REFUSED;
    p->subject = (canal_str_t){a->u.key.subject, strlen(a->u.key.subject)};
    add_tokens(req, &p->scopes, &p->nscopes, a->u.key.scopes, strlen(a->u.key.scopes));
    return CANAL_AUTH_OK;
}

static canal_auth_result_t basic(const canal_auth_t *a, canal_req_t *req, canal_principal_t *p, const char **why)
{
    canal_str_t scheme, cred;
    int n = authorization(req, &scheme, &cred);
    if (n < 0) {
        *why = "two Authorization fields";
        return CANAL_AUTH_MALFORMED;
    }
    if (n == 0 || !scheme_is(scheme, "Basic"))
        return CANAL_AUTH_NONE;
    *why = "the credentials are refused";
    canal_str_t user, pass;
    if (canal__basic_decode(cred, canal_req_alloc(req, cred.len + 1), &user, &pass) != 0)
        return CANAL_AUTH_REFUSED;
    p->subject = user;
    int ok;
    if (a->u.basic.verify != NULL) {
        ok = a->u.basic.verify(req, user, pass, p, a->u.basic.data) == 1;
    } else { /* both compared, whatever the first says */
        int u = canal_secret_equal(user.base, user.len, a->u.basic.user, strlen(a->u.basic.user));
        int w = canal_secret_equal(pass.base, pass.len, a->u.basic.password, a->u.basic.password_len);
        ok = u & w;
    }
    return ok ? CANAL_AUTH_OK : CANAL_AUTH_REFUSED;
}

static canal_auth_result_t authenticate(const canal_auth_t *a, canal_req_t *req, canal_principal_t *p,
                                        const char **why)
{
    switch (a->kind) {
    case AUTH_JWT:
        return bearer(a, req, p, why);
    case AUTH_API_KEY:
        return api_key(a, req, p, why);
    case AUTH_BASIC:
        return basic(a, req, p, why);
    case AUTH_SESSION: {
        canal_str_t who;
        int rc = canal_session_get(req, a->u.sessions, &who);
        if (rc != 0)
            return rc == CANAL_ECLOSED ? CANAL_AUTH_UNAVAILABLE : CANAL_AUTH_NONE;
        canal_principal_set_subject(p, who);
        return CANAL_AUTH_OK;
    }
    case AUTH_CUSTOM:
        break;
    }
    canal_auth_result_t r = a->u.custom.fn(req, p, a->u.custom.data);
    *why = "the credentials are refused";
    return r >= CANAL_AUTH_NONE && r <= CANAL_AUTH_UNAVAILABLE ? r : CANAL_AUTH_REFUSED;
}

/* ---- answers ---- */

static const char *scheme_label(const canal_auth_t *a)
{
    static const char *const labels[] = {"Bearer", "ApiKey", "Basic"};
    return a->kind == AUTH_CUSTOM || a->kind == AUTH_SESSION ? a->name : labels[a->kind];
}

/* scope= names the policy's scopes when they fit a quoted-string (RFC 6750 3: NQSCHAR). */
static int nqschar_only(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e || *s == '"' || *s == '\\')
            return 0;
    return 1;
}

static void unauthenticated(canal_req_t *req, const canal_policy_t *pol, canal_auth_result_t worst,
                            const canal_auth_t *bad, const char *why)
{
    if (worst == CANAL_AUTH_UNAVAILABLE) { /* no verdict on the credentials: try again */
        canal_redis_unavailable(req);
        return;
    }
    for (size_t i = 0; i < CANAL_POLICY_MAX_SCHEMES && pol->schemes[i] != NULL; i++) {
        const canal_auth_t *a = pol->schemes[i];
        if (a->challenge == NULL)
            continue;
        if (a == bad && a->kind == AUTH_JWT)
            canal_res_header(req, "www-authenticate",
                             canal_req_printf(req, "%s, error=\"%s\", error_description=\"%s\"", a->challenge,
                                              worst == CANAL_AUTH_MALFORMED ? "invalid_request" : "invalid_token", why));
        else
            canal_res_header(req, "www-authenticate", a->challenge);
    }
    if (worst == CANAL_AUTH_MALFORMED)
        canal_res_problem(req, 400, "malformed credentials: %s", why);
    else if (worst == CANAL_AUTH_REFUSED)
        canal_res_problem(req, 401, "%s", why);
    else
        canal_res_problem(req, 401, "authentication is required");
}

static void forbidden(canal_req_t *req, const canal_policy_t *pol, const canal_auth_t *a)
{
    if (a->kind == AUTH_JWT) {
        int scope = pol->scopes != NULL && pol->scopes[0] != '\0' && nqschar_only(pol->scopes);
        canal_res_header(req, "www-authenticate",
                         canal_req_printf(req, "%s, error=\"insufficient_scope\"%s%s%s", a->challenge,
                                          scope ? ", scope=\"" : "", scope ? pol->scopes : "", scope ? "\"" : ""));
    }
    if (pol->scopes != NULL && pol->scopes[0] != '\0')
        canal_res_problem(req, 403, "not allowed here (scopes required: %s)", pol->scopes);
    else
        canal_res_problem(req, 403, "not allowed here");
}

/* Every space-separated token of want is held (all), or one is (any). */
static int holds(const canal_str_t *list, size_t n, const char *want, int all)
{
    int any = 0;
    for (const char *s = want; *s;) {
        size_t len = strcspn(s, " ");
        if (len > 0) {
            int has = list_has(list, n, s, len);
            if (all && !has)
                return 0;
            any |= has;
        }
        s += len + (s[len] == ' ');
    }
    return all ? 1 : any;
}

static const struct canal__feature feature;
#define GUARD_ORDER 30 /* after CORS: a 401 carries CORS headers (core/feature.h) */
static int option_attach(canal_app_t *app, const void *value, const void **kept, canal_error_info_t *err);
/* CANAL_POLICY(): a route's own policy; the kind's address is also the key of the app's and
 * the groups' policies (canal__scope_set()) */
const canal_option_kind_t canal_policy_option = {&feature, "policy", option_attach, NULL};

/* The guard of a route with a policy: 1 if the request is not allowed (the 401/403/400 is
 * set) */
static int policy_guard(canal_req_t *req, const void *arg)
{
    const canal_policy_t *pol = arg;
    canal_auth_result_t worst = CANAL_AUTH_NONE;
    const canal_auth_t *bad = NULL, *by = NULL;
    const char *why = NULL;
    for (size_t i = 0; i < CANAL_POLICY_MAX_SCHEMES && pol->schemes[i] != NULL && by == NULL; i++) {
        const canal_auth_t *a = pol->schemes[i];
        canal_principal_t *p = principal_new(req, scheme_label(a));
        const char *w = NULL;
        canal_auth_result_t r = authenticate(a, req, p, &w);
        if (r == CANAL_AUTH_OK)
            *(canal_principal_t **)canal__req_state(req, &principal_key, sizeof(p), NULL) = p, by = a;
        else if (r > worst)
            worst = r, bad = a, why = w;
    }
    if (by == NULL) {
        unauthenticated(req, pol, worst, bad, why);
        return 1;
    }
    const canal_principal_t *p = canal_req_principal(req);
    if ((pol->scopes != NULL && !holds(p->scopes, p->nscopes, pol->scopes, 1)) ||
        (pol->roles != NULL && pol->roles[0] != '\0' && !holds(p->roles, p->nroles, pol->roles, 0)) ||
        (pol->allow != NULL && pol->allow(req, p, pol->data) != 1)) {
        forbidden(req, pol, by);
        return 1;
    }
    return 0;
}

/* ---- attaching policies ---- */

static int policy_valid(const canal_policy_t *pol)
{
    return pol == NULL || pol->anonymous || pol->schemes[0] != NULL;
}

static int option_attach(canal_app_t *app, const void *value, const void **kept, canal_error_info_t *err)
{
    if (value == NULL || !policy_valid(value))
        return canal_error_set(err, CANAL_EINVAL, 0, "a policy needs a scheme, or anonymous");
    *kept = value;
    return 0;
}

static int attach_error(canal_app_t *app, int code, const char *msg)
{
    canal_error_info_t e;
    canal_error_set(&e, code, 0, "%s", msg);
    return canal__reg_error(app, &e);
}

/* a policy for the app (group NULL) or a group */
static int set_policy(canal_app_t *app, canal_route_group_t *group, const canal_policy_t *policy)
{
    if (atomic_load(&app->state) != APP_CREATED)
        return attach_error(app, CANAL_ESTATE, "policies are set before the app starts");
    int rc = !policy_valid(policy) ? CANAL_EINVAL : canal__feature_on(app, &feature) == NULL ? CANAL_ENOMEM : 0;
    if (rc == 0)
        rc = canal__scope_set(app, &canal_policy_option, group, policy);
    if (rc == CANAL_EINVAL)
        return attach_error(app, rc, group != NULL && policy_valid(policy) ? "not a route group of this app"
                                                                          : "a policy needs a scheme, or anonymous");
    return rc != 0 ? attach_error(app, rc, "out of memory") : 0;
}

int canal_app_policy(canal_app_t *app, const canal_policy_t *policy)
{
    return set_policy(app, NULL, policy);
}

int canal_app_group_policy(canal_app_t *app, canal_route_group_t *group, const canal_policy_t *policy)
{
    return set_policy(app, group, policy);
}

/* The nearest policy of an endpoint: its own, its groups' from the innermost, the app's;
 * NULL for none or an anonymous one. */
static const canal_policy_t *resolve(const canal_app_t *app, const struct canal_endpoint *ep)
{
    const canal_policy_t *pol = canal__scope_get(app, &canal_policy_option, ep, canal__endpoint_option(ep, &canal_policy_option));
    return pol != NULL && !pol->anonymous ? pol : NULL;
}

static int policies_start(canal_app_t *app, void *st)
{
    for (size_t i = 0; i < app->nendpoints; i++) {
        const canal_policy_t *pol = resolve(app, &app->endpoints[i]);
        if (pol != NULL && canal__endpoint_guard(&app->endpoints[i], GUARD_ORDER, policy_guard, pol) != 0) {
            canal__log(app, CANAL_LOG_ERROR, "route %zu: too many guards", i);
            return -1;
        }
    }
    return 0;
}

static const struct canal__feature feature = {
    .name = "policies",
    .start = policies_start,
};

const canal_policy_t *canal_app_route_policy(const canal_app_t *app, const canal_route_t *route)
{
    const struct canal_endpoint *ep = canal__endpoint_of((canal_app_t *)app, route);
    return ep != NULL ? resolve(app, ep) : NULL;
}

/* ---- OpenAPI (openapi.c) ---- */

const char *canal__auth_name(const canal_auth_t *a)
{
    return a->name;
}

json_t *canal__auth_openapi_scheme(const canal_auth_t *a)
{
    switch (a->kind) {
    case AUTH_JWT:
        return json_pack("{s:s, s:s, s:s}", "type", "http", "scheme", "bearer", "bearerFormat", "JWT");
    case AUTH_API_KEY:
        return json_pack("{s:s, s:s, s:s}", "type", "apiKey", "in", "header", "name", a->u.key.header);
    case AUTH_BASIC:
        return json_pack("{s:s, s:s}", "type", "http", "scheme", "basic");
    case AUTH_SESSION:
        return json_pack("{s:s, s:s, s:s, s:s}", "type", "apiKey", "in", "cookie", "name",
                         canal__sessions_cookie(a->u.sessions), "description", "A session cookie (canal_session_begin()).");
    case AUTH_CUSTOM:
        break;
    }
    static const char *const where[] = {"", "header", "query", "cookie"};
    if (a->u.custom.in == CANAL_CREDENTIAL_HTTP)
        return json_pack("{s:s, s:s, s:s}", "type", "http", "scheme", a->u.custom.param, "description",
                         "A scheme of the app's own.");
    return json_pack("{s:s, s:s, s:s, s:s}", "type", "apiKey", "in", where[a->u.custom.in], "name", a->u.custom.param,
                     "description", "A scheme of the app's own.");
}
