/* SPDX-License-Identifier: MIT */
/*
 * canal-secure: issue 18's contract, served in both modes: router-mode routes with policies
 * in their specs (router_mode.c: /public, /me, /hs/me, /admin, /key, /basic) and controllers
 * with policies and a rate limit in their tables (controller_mode.c: /login, /session,
 * /logout, /other/login, /other/session, /limited). main.c reads the flags and the secret
 * files and makes the schemes. docs/security.md walks through it.
 */
#ifndef SECURE_H
#define SECURE_H

#include <canal.h>

/* What main() made from the flags; both modes read it. Everything outlives the app. */
typedef struct secure {
    canal_auth_t *jwt;     /* every configured JWT key (HS256, RS256, ES256) */
    canal_auth_t *jwt_hs;  /* the HS256 secret only: /hs/me */
    canal_auth_t *api_key; /* X-Api-Key */
    canal_auth_t *basic;   /* --basic-user and --basic-password */
    canal_auth_t *cookie, *cookie_other;       /* a valid sid cookie (custom schemes) */
    canal_sessions_t *sessions, *sessions_other; /* signed with --cookie-secret, -other */
    canal_rate_limit_t *limit;                 /* --rate R per --window W per client */
} secure_t;

int secure_router_mode(canal_app_t *app, const secure_t *s, canal_error_info_t *err);
int secure_controller_mode(canal_mvc_t *mvc, const secure_t *s, canal_error_info_t *err);

#endif
