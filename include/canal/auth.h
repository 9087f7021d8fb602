/* SPDX-License-Identifier: MIT */
/**
 * @file canal/auth.h
 * Authentication (who is asking: Bearer JWT, API key, Basic, a scheme of the app's own) and
 * authorization policies (what they may do: scopes, roles, a predicate), checked by the server
 * for a route before anything of the route runs: no filter, no binding, no body parsing, no
 * handler for a request that is not allowed. See docs/security.md.
 *
 * A scheme (canal_auth_t) is made once at start-up from a configuration and destroyed after
 * the app; a policy (canal_policy_t) is a const struct naming schemes and requirements. A
 * policy is attached to a route (CANAL_POLICY() among its options), a route group
 * (canal_app_group_policy()), the whole app as its default (canal_app_policy()), or a
 * controller or an action (canal/controller.h). The nearest one wins: route (action, then
 * controller), then the groups from the innermost, then the app's default. A policy with
 * anonymous set turns the check off for what it covers.
 *
 * Answers, as problem details (application/problem+json):
 * - no credentials of any of the policy's schemes: 401 with one WWW-Authenticate challenge
 *   per scheme (`Bearer realm="canal"`, `ApiKey realm="canal"`,
 *   `Basic realm="canal", charset="UTF-8"`), none carrying an error attribute;
 * - credentials that were sent and are refused: 401, the Bearer challenge with
 *   error="invalid_token";
 * - an Authorization field that is not `scheme 1*SP credentials` of the kind its scheme needs
 *   (a Bearer field with no token, spaces or characters outside RFC 6750's b64token, non-ASCII
 *   bytes) or two Authorization fields: 400, the Bearer challenge with error="invalid_request";
 * - authenticated but not allowed (a scope, a role, the predicate): 403, and for a Bearer
 *   principal `Bearer realm="canal", error="insufficient_scope", scope="..."`. Never a 401.
 *
 * The principal lives in request memory: canal_req_principal() and everything it hands out is
 * valid until the answer has been sent. Schemes and policies are read by every worker thread
 * at once and never change after canal_app_start().
 */
#ifndef CANAL_AUTH_H
#define CANAL_AUTH_H

#include <stddef.h>
#include <jansson.h>
#include "app.h"
#include "schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An authentication scheme. Opaque; from canal_auth_jwt(), canal_auth_api_key(),
 * canal_auth_basic() or canal_auth_custom(); canal_auth_destroy() after the app. */
typedef struct canal_auth canal_auth_t;
/** Who a request was authenticated as. Opaque; in request memory. */
typedef struct canal_principal canal_principal_t;

/** Longest Bearer token canal reads (bytes); a longer one is refused (401 invalid_token). */
#define CANAL_JWT_MAX_LENGTH 8192
/** Most scopes and most roles a principal holds; a token with more is refused (401). */
#define CANAL_PRINCIPAL_MAX_SCOPES 64
/** Most keys in canal_jwt_config_t.keys (one per algorithm). */
#define CANAL_JWT_MAX_KEYS 3
/** Most usable keys a JWKS file gives one JWT scheme. */
#define CANAL_JWKS_MAX_KEYS 16
/** Largest JWKS file canal reads (bytes). */
#define CANAL_JWKS_MAX_LENGTH 262144
/** Largest clock leeway of a JWT scheme, in seconds. */
#define CANAL_JWT_MAX_LEEWAY 60
/** Most schemes one policy tries. */
#define CANAL_POLICY_MAX_SCHEMES 4

/* ---- Bearer JWT (RFC 7519, JWS compact serialization, RFC 7515) ---- */

/** A JWS algorithm; each key is bound to exactly one. */
typedef enum canal_jwt_alg {
    CANAL_JWT_NONE = 0, /**< ends a key table (never an algorithm canal accepts) */
    CANAL_JWT_HS256,    /**< HMAC-SHA-256 with a secret of at least 32 bytes */
    CANAL_JWT_RS256,    /**< RSASSA-PKCS1-v1_5 with SHA-256, an RSA key of 2048 bits or more */
    CANAL_JWT_ES256     /**< ECDSA P-256 with SHA-256, signatures 64 bytes R||S */
} canal_jwt_alg_t;

/** One verification key. */
typedef struct canal_jwt_key {
    canal_jwt_alg_t alg;      /**< the only algorithm this key verifies */
    const void *secret;       /**< HS256: the secret's bytes (copied); not PEM or DER */
    size_t secret_len;        /**< HS256: its length (at least 32, RFC 7518 3.2) */
    const char *pem_file;     /**< RS256, ES256: a PEM file with a "BEGIN PUBLIC KEY" block */
} canal_jwt_key_t;

/** A Bearer JWT scheme's configuration. Strings are copied by canal_auth_jwt(). */
typedef struct canal_jwt_config {
    canal_jwt_key_t keys[CANAL_JWT_MAX_KEYS]; /**< at most one per algorithm; alg 0 ends */
    const char *issuer;       /**< required: "iss" must equal it exactly */
    const char *audience;     /**< required: "aud" must equal it, or be an array holding it */
    unsigned leeway;          /**< seconds of clock skew allowed on exp, nbf, iat (<= 60) */
    const char *realm;        /**< the challenge's realm (default "canal") */
    const char *roles_claim;  /**< claim holding the roles, an array of strings ("roles") */
    const char *name;         /**< its name in OpenAPI's securitySchemes (default "bearer") */
    const char *jwks_file;    /**< a JWKS file (RFC 7517) of more keys, read once by
                                   canal_auth_jwt(), or NULL (see canal_auth_jwt()) */
} canal_jwt_config_t;

/**
 * A Bearer JWT scheme. The algorithm of a token must be exactly "HS256", "RS256" or "ES256"
 * and one of the configured keys' (never "none", never chosen from the token's kid, jku, x5u,
 * jwk or x5c, which are ignored, as are typ and cty; canal never fetches or opens anything a
 * token names). A token is refused for: not three unpadded base64url segments (RFC 7515 2),
 * a header or payload that is not a JSON object in UTF-8 (duplicate member names are refused),
 * "crit" or "b64" in the header, a bad signature, exp missing or not a number or
 * exp <= now - leeway, nbf > now + leeway, iat > now + leeway, iss or aud not matching
 * (strings compare whole, as bytes), sub missing or not a non-empty string, more than
 * CANAL_PRINCIPAL_MAX_SCOPES scopes or roles, or a length over CANAL_JWT_MAX_LENGTH.
 * The principal's scopes are the space-separated tokens of a string "scope" claim (any other
 * type grants none; "scp" is ignored), its roles the strings of roles_claim.
 *
 * A JWKS file (jwks_file: a JSON object whose "keys" is an array of JWKs, read from disk at
 * start-up, never fetched) adds keys beside keys[]: kty "RSA" (n, e; 2048 bits or more) for
 * RS256, "EC" with crv "P-256" (x, y, a point on the curve) for ES256, "oct" (k, 32 bytes or
 * more) for HS256. Each key is bound to one algorithm: its "alg" if given, which must be the
 * one of its kty (an "alg" of another kty is an error; one canal does not implement, such as
 * "RS512", leaves the key out), else its kty's. A key whose "use" is not "sig" is left out.
 * Among the keys of the token's algorithm only: when there is one, it verifies whatever the
 * token's "kid" says; when there are several, each must have a distinct "kid" and the
 * token's "kid" (a string) must name one of them, else the token is refused. A kid that names
 * a key of another algorithm never selects it.
 *
 * Returns the scheme, or NULL with err filled (CANAL_EINVAL: no key, two keys of one
 * algorithm, an HS256 secret shorter than 32 bytes or that is a PEM or DER key, a PEM file
 * that cannot be read or holds a key of the wrong type or size, a JWKS file that cannot be
 * read, is not JSON, holds a key that does not parse or is too weak, more than
 * CANAL_JWKS_MAX_KEYS usable keys, or several keys of one algorithm without distinct kids
 * (a configured key has none), no issuer or audience, a
 * leeway over 60, a realm with '"', '\\' or a control character; CANAL_ENOMEM).
 */
CANAL_API canal_auth_t *canal_auth_jwt(const canal_jwt_config_t *cfg, canal_error_info_t *err);

/**
 * Replaces a JWT scheme's keys and rules (issuer, audience, leeway, roles claim) with cfg's, its
 * PEM and JWKS files read again, while the app runs: a reload hook's job (canal_app_on_reload(),
 * a rotated key, a new JWKS file). The requests from then on verify with them; the scheme's
 * name and realm stay. The keys replaced are freed with the scheme. Returns 0, or the error of
 * canal_auth_jwt() (and CANAL_EINVAL for a scheme that is not a JWT one), changing nothing.
 */
CANAL_API int canal_auth_jwt_reload(canal_auth_t *auth, const canal_jwt_config_t *cfg, canal_error_info_t *err);

/* ---- Issuing JWTs ---- */

/** A JWT signer: one key, an issuer and an audience (canal_jwt_signer_create()). Opaque. */
typedef struct canal_jwt_signer canal_jwt_signer_t;

/** A signer's configuration. Strings are copied by canal_jwt_signer_create(). */
typedef struct canal_jwt_signer_config {
    canal_jwt_alg_t alg;    /**< HS256, RS256 or ES256 */
    const void *secret;     /**< HS256: the secret's bytes (at least 32), as canal_jwt_key_t's */
    size_t secret_len;      /**< HS256: its length */
    const char *pem_file;   /**< RS256, ES256: a PEM file with the PRIVATE key (PKCS#8
                                 "BEGIN PRIVATE KEY", or "BEGIN RSA/EC PRIVATE KEY"): an RSA
                                 key of 2048 bits or more, a P-256 key */
    const char *kid;        /**< the header's "kid" (a verifier with several keys of the
                                 algorithm picks by it), or NULL for none */
    const char *issuer;     /**< required: every token's "iss" */
    const char *audience;   /**< required: every token's "aud" */
    unsigned ttl;           /**< seconds from "iat" to "exp" unless a token says; 0: 900 */
} canal_jwt_signer_config_t;

/**
 * Makes a signer, for the tokens an app issues (a login's answer); a canal_auth_jwt() scheme
 * with the same secret, or with the public key of the same pair, issuer and audience, accepts
 * them, as does any RFC 7519 library (the tests check PyJWT). Returns NULL with err filled:
 * CANAL_EINVAL (an algorithm other than the three, an HS256 secret shorter than 32 bytes or
 * that is a PEM or DER key, a PEM file without a private key of the algorithm's type and size,
 * no issuer or audience, a kid with '"', '\' or a control character), CANAL_ENOMEM. Safe to
 * use from every worker thread at once; destroy it after the app.
 */
CANAL_API canal_jwt_signer_t *canal_jwt_signer_create(const canal_jwt_signer_config_t *cfg,
                                                      canal_error_info_t *err);
/** Destroys a signer (NULL is a no-op). */
CANAL_API void canal_jwt_signer_destroy(canal_jwt_signer_t *s);

/** What a token says, beside the signer's iss and aud (canal_jwt_sign()). */
typedef struct canal_jwt_claims {
    const char *subject;          /**< required: "sub", a non-empty string */
    const char *scope;            /**< "scope": space-separated scopes, or NULL */
    unsigned ttl;                 /**< seconds to "exp" from now; 0: the signer's */
    unsigned not_before;          /**< "nbf" = now + this, when not 0 (else no "nbf") */
    int jti;                      /**< 1: a "jti" of 16 random bytes (base64url), so that a
                                       token can be told from every other (revocation lists) */
    const json_t *extra;          /**< more claims: an object, copied, or NULL */
    const canal_schema_t *schema; /**< more claims from a typed model: obj written by its schema
                                       (canal/schema.h), or NULL */
    const void *obj;              /**< the struct schema describes */
} canal_jwt_claims_t;

/**
 * Issues a token: the header {"alg", "typ": "JWT", "kid" if the signer has one}, the claims
 * iss, aud, sub, iat (now), exp, nbf, jti and scope as c says, then extra's members, then
 * the model's; signed with the signer's key. Returns the token (malloc'd, NUL-terminated,
 * free() it), or NULL with err filled: CANAL_EINVAL (no subject; a member of extra or of the
 * model named like a claim canal writes: iss, aud, sub, iat, exp, nbf, jti, scope; extra not
 * an object; obj NULL with a schema), CANAL_ENOMEM, CANAL_ESYS (OpenSSL failed to sign).
 */
CANAL_API char *canal_jwt_sign(const canal_jwt_signer_t *s, const canal_jwt_claims_t *c, canal_error_info_t *err);

/* ---- API key ---- */

/** An API key scheme's configuration. Copied by canal_auth_api_key(). */
typedef struct canal_api_key_config {
    const char *header;       /**< the field carrying the key (default "X-Api-Key") */
    const void *key;          /**< the key's bytes (required, not empty) */
    size_t key_len;           /**< its length */
    const char *subject;      /**< the principal's subject (default "api-key") */
    const char *scopes;       /**< space-separated scopes the key grants, or NULL */
    const char *realm;        /**< the challenge's realm (default "canal") */
    const char *name;         /**< its name in OpenAPI (default "apiKey") */
} canal_api_key_config_t;

/**
 * An API key scheme: exactly one field named header (ASCII case-insensitive), whose value
 * less surrounding spaces and tabs equals key byte for byte, compared in constant time
 * (CRYPTO_memcmp after a length check). Two such fields, or a wrong key: 401. No field: 401
 * without credentials. The key is never read from the query or Authorization.
 * NULL with err filled on a bad configuration (CANAL_EINVAL, CANAL_ENOMEM).
 */
CANAL_API canal_auth_t *canal_auth_api_key(const canal_api_key_config_t *cfg,
                                           canal_error_info_t *err);

/* ---- Basic (RFC 7617) ---- */

/**
 * Checks Basic credentials: user and password are the decoded bytes (valid UTF-8, not
 * NUL-terminated; the password may hold ':'). Return 1 to accept (the principal's subject is
 * user unless the function sets another, and it may add scopes and roles to p), 0 to refuse.
 * Compare secrets with canal_secret_equal(). Called on worker threads, several at a time.
 */
typedef int (*canal_basic_fn)(canal_req_t *req, canal_str_t user, canal_str_t password,
                              canal_principal_t *p, void *data);

/** A Basic scheme's configuration. Copied by canal_auth_basic(). */
typedef struct canal_basic_config {
    canal_basic_fn verify;    /**< the check; NULL: user and password below */
    void *data;               /**< passed to verify; borrowed */
    const char *user;         /**< without verify: the one user accepted */
    const void *password;     /**< without verify: its password's bytes (UTF-8) */
    size_t password_len;      /**< its length */
    const char *realm;        /**< the challenge's realm (default "canal") */
    const char *name;         /**< its name in OpenAPI (default "basic") */
} canal_basic_config_t;

/**
 * A Basic scheme: one Authorization field, scheme "Basic" in any case, 1*SP, then padded
 * standard base64 of "user:password" split at the first ':'. Undecodable base64, no colon,
 * bytes that are not UTF-8, or credentials refused: 401. The challenge is
 * `Basic realm="...", charset="UTF-8"`. Without verify, user and password are compared in
 * constant time, as bytes (a Latin-1 password is not the UTF-8 one; "password\0junk" is not
 * "password"). NULL with err filled on a bad configuration.
 */
CANAL_API canal_auth_t *canal_auth_basic(const canal_basic_config_t *cfg,
                                         canal_error_info_t *err);

/**
 * 1 if a (alen bytes) equals b (blen bytes). The time taken depends on the lengths only, not
 * on the contents (CRYPTO_memcmp).
 */
CANAL_API int canal_secret_equal(const void *a, size_t alen, const void *b, size_t blen);

/** The largest secret file canal_secret_read() reads (bytes). */
#define CANAL_SECRET_MAX_LENGTH 65536

/**
 * Reads a secret from a file (an HS256 secret, an API key, a password, a cookie key): its
 * exact bytes less one trailing "\n" or "\r\n", as deployments mount them. *out receives
 * the bytes in malloc'd memory, NUL-terminated past out->len (a secret may hold NUL bytes
 * itself); free it with canal_secret_free(). Returns 0, or with *out untouched and err (if
 * given) filled: CANAL_ESYS (the file cannot be opened or read), CANAL_ELIMIT (over
 * CANAL_SECRET_MAX_LENGTH bytes), CANAL_EINVAL (empty, once the newline is gone),
 * CANAL_ENOMEM.
 */
CANAL_API int canal_secret_read(const char *path, canal_str_t *out, canal_error_info_t *err);

/** Wipes (OPENSSL_cleanse) and frees a secret of canal_secret_read(), and empties *s. NULL
 * or an empty secret is a no-op. */
CANAL_API void canal_secret_free(canal_str_t *s);

/* ---- a scheme of the app's own ---- */

/** What a scheme found on a request. */
typedef enum canal_auth_result {
    CANAL_AUTH_NONE = 0,  /**< no credentials of this scheme: 401 with the plain challenge */
    CANAL_AUTH_OK,        /**< authenticated: the principal is the request's */
    CANAL_AUTH_REFUSED,   /**< credentials sent and refused: 401 */
    CANAL_AUTH_MALFORMED, /**< credentials that do not parse: 400 */
    CANAL_AUTH_UNAVAILABLE /**< what the credentials are checked against cannot be reached now
                                (a session store on Redis): 503 with Retry-After, no challenge */
} canal_auth_result_t;

/**
 * A custom scheme's check: look at the request, and on success fill p (its subject at least,
 * canal_principal_set_subject()) and return CANAL_AUTH_OK. Called on worker threads, several
 * at a time; it must answer at once (no deferral).
 */
typedef canal_auth_result_t (*canal_auth_fn)(canal_req_t *req, canal_principal_t *p, void *data);

/** Where a custom scheme's credential travels, for the OpenAPI document. */
typedef enum canal_credential_in {
    CANAL_CREDENTIAL_HTTP = 0, /**< the Authorization field, with an HTTP scheme (http_scheme) */
    CANAL_CREDENTIAL_HEADER,   /**< a header field of its own (param) */
    CANAL_CREDENTIAL_QUERY,    /**< a query parameter (param) */
    CANAL_CREDENTIAL_COOKIE    /**< a cookie (param) */
} canal_credential_in_t;

/** A custom scheme's configuration. Strings copied by canal_auth_custom(). */
typedef struct canal_custom_auth_config {
    const char *name;         /**< the principal's scheme name and OpenAPI name (required) */
    canal_auth_fn authenticate; /**< required */
    void *data;               /**< passed to authenticate; borrowed */
    const char *challenge;    /**< the WWW-Authenticate value on a 401, or NULL for none */
    canal_credential_in_t in; /**< where the credential travels: OpenAPI writes an "http"
                                   scheme for CANAL_CREDENTIAL_HTTP (the default), else an
                                   "apiKey" in the header, the query or a cookie */
    const char *param;        /**< the header's, parameter's or cookie's name (required but
                                   for CANAL_CREDENTIAL_HTTP) */
    const char *http_scheme;  /**< CANAL_CREDENTIAL_HTTP: the Authorization scheme, a token
                                   ("bearer", "digest"); NULL: name, lower-cased */
} canal_custom_auth_config_t;

/** A custom scheme. NULL with err filled on a bad configuration: no name or authenticate, no
 * param where in needs one, a param or http_scheme that is not a token. */
CANAL_API canal_auth_t *canal_auth_custom(const canal_custom_auth_config_t *cfg,
                                          canal_error_info_t *err);

/** An app's sessions (canal/session.h). */
typedef struct canal_sessions canal_sessions_t;

/** The configuration of a session scheme (canal_auth_session()). */
typedef struct canal_session_auth_config {
    canal_sessions_t *sessions; /**< required (canal/session.h); borrowed: the app's */
    const char *name;           /**< the principal's scheme name and OpenAPI name; NULL:
                                     "session" */
    const char *challenge;      /**< the WWW-Authenticate value on a 401, or NULL for none */
} canal_session_auth_config_t;

/**
 * A session scheme: a policy requires a logged-in session as it requires a JWT. The request's
 * session cookie (canal_session_get()) authenticates it, and the principal's subject is the
 * session's data, as canal_session_begin() stored it (the user's name or ID); no cookie, or
 * one that does not verify, or a session unknown, expired or revoked is "no credentials"
 * (401); a store that cannot be reached (--store on Redis) is CANAL_AUTH_UNAVAILABLE (503), so
 * that a client keeps a session an outage did not end. OpenAPI describes it as an "apiKey" in the sessions' cookie. NULL with err filled
 * (CANAL_EINVAL without sessions, CANAL_ENOMEM).
 */
CANAL_API canal_auth_t *canal_auth_session(const canal_session_auth_config_t *cfg, canal_error_info_t *err);

/** Frees a scheme. After the app that uses it is destroyed. NULL is a no-op. */
CANAL_API void canal_auth_destroy(canal_auth_t *auth);

/* ---- policies ---- */

/**
 * A policy's own check, after the scopes and roles: 1 to allow, 0 to forbid (403). p is the
 * authenticated principal. Called on worker threads, several at a time.
 */
typedef int (*canal_policy_fn)(canal_req_t *req, const canal_principal_t *p, void *data);

/**
 * A policy. Designated initializers; it must outlive the app (a static const, typically).
 * The schemes are tried in order: the first that authenticates the request gives the
 * principal; if none does, the answer is a 401 (or 400) as the file comment says.
 */
typedef struct canal_policy {
    int anonymous;            /**< 1: nothing is checked (an override of a group's or the
                                   app's policy); the other fields are ignored */
    const canal_auth_t *schemes[CANAL_POLICY_MAX_SCHEMES]; /**< at least one; NULL ends */
    const char *scopes;       /**< space-separated scopes the principal must all hold */
    const char *roles;        /**< space-separated roles of which it must hold one */
    canal_policy_fn allow;    /**< a predicate, or NULL */
    void *data;               /**< passed to allow; borrowed */
} canal_policy_t;

/**
 * Sets the app's default policy, for every route without a nearer one (health endpoints are
 * always anonymous). Only before canal_app_start(). Returns 0, CANAL_ESTATE, or CANAL_EINVAL
 * for a policy with neither anonymous nor a scheme (also kept as the registration error).
 */
CANAL_API int canal_app_policy(canal_app_t *app, const canal_policy_t *policy);

/**
 * Sets the policy of a route group (canal_app_group() of this app) and its subgroups, for
 * their routes without a policy of their own. Only before canal_app_start(). Returns 0,
 * CANAL_ESTATE, CANAL_EINVAL (not a group of the app's, or a bad policy).
 */
CANAL_API int canal_app_group_policy(canal_app_t *app, canal_route_group_t *group,
                                     const canal_policy_t *policy);

/** The kind of CANAL_POLICY() (canal_route_option_t). */
CANAL_API extern const canal_option_kind_t canal_policy_option;
/**
 * A route's, an action's or a controller's policy (a const canal_policy_t *, borrowed: it
 * must outlive the app), among its options: `.options = {CANAL_POLICY(&admins)}`. A policy
 * with neither anonymous nor a scheme is CANAL_EINVAL at registration.
 */
#define CANAL_POLICY(policy) {&canal_policy_option, (policy)}

/**
 * The policy that guards route, as it will be checked once the app starts: the route's,
 * its groups', or the app's default; NULL when none or when it is anonymous. Borrowed.
 */
CANAL_API const canal_policy_t *canal_app_route_policy(const canal_app_t *app,
                                                       const canal_route_t *route);

/* ---- the principal ---- */

/** The request's principal, or NULL when its route has no policy (or an anonymous one). */
CANAL_API const canal_principal_t *canal_req_principal(const canal_req_t *req);

/** The scheme that authenticated it: "Bearer", "ApiKey", "Basic" or a custom name. Static or
 * the scheme's. */
CANAL_API const char *canal_principal_scheme(const canal_principal_t *p);
/** Its subject: the JWT's "sub", the Basic user, the API key's configured subject. */
CANAL_API canal_str_t canal_principal_subject(const canal_principal_t *p);
/** The number of its scopes. */
CANAL_API size_t canal_principal_scope_count(const canal_principal_t *p);
/** Scope i in the order given, or {NULL, 0} past the end. */
CANAL_API canal_str_t canal_principal_scope_at(const canal_principal_t *p, size_t i);
/** 1 if it holds scope (compared whole and case-sensitively). */
CANAL_API int canal_principal_has_scope(const canal_principal_t *p, const char *scope);
/** The number of its roles. */
CANAL_API size_t canal_principal_role_count(const canal_principal_t *p);
/** Role i in the order given, or {NULL, 0} past the end. */
CANAL_API canal_str_t canal_principal_role_at(const canal_principal_t *p, size_t i);
/** 1 if it holds role (compared whole and case-sensitively). */
CANAL_API int canal_principal_has_role(const canal_principal_t *p, const char *role);
/**
 * A claim by name: a member of the JWT's payload (or of what a custom scheme set with
 * canal_principal_set_claims_new()), or NULL. A borrowed reference that lives as long as the
 * request; do not change it.
 */
CANAL_API json_t *canal_principal_claim(const canal_principal_t *p, const char *name);
/** Every claim as one JSON object (borrowed, as canal_principal_claim()), or NULL. */
CANAL_API json_t *canal_principal_claims(const canal_principal_t *p);

/* For Basic verify functions and custom schemes, on the principal they are given: */

/** Sets the subject (copied into request memory). */
CANAL_API void canal_principal_set_subject(canal_principal_t *p, canal_str_t subject);
/** Adds a scope (copied). CANAL_ELIMIT past CANAL_PRINCIPAL_MAX_SCOPES, else 0. */
CANAL_API int canal_principal_add_scope(canal_principal_t *p, canal_str_t scope);
/** Adds a role (copied). CANAL_ELIMIT past CANAL_PRINCIPAL_MAX_SCOPES, else 0. */
CANAL_API int canal_principal_add_role(canal_principal_t *p, canal_str_t role);
/** Sets the claims object (steals the reference; released with the request). CANAL_EINVAL
 * if claims is not an object. */
CANAL_API int canal_principal_set_claims_new(canal_principal_t *p, json_t *claims);

#ifdef __cplusplus
}
#endif

#endif
