/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the trusted proxy list and the client address walk (lib/core/proxy.c),
 * the code that reads X-Forwarded-For and Forwarded, which any client can send.
 * The input is split on its first two newlines: a trusted proxy list, then a header value,
 * then the peer address (text). The first byte of the header part chooses Forwarded (odd)
 * or X-Forwarded-For (even). Checks, besides the sanitizers:
 *   - a list that parses gives as many entries as it has tokens, each prefix in range;
 *   - an untrusted peer's headers change nothing: the client is the peer;
 *   - a trusted peer's client is the peer or an address written in the header.
 * Build and run: test/fuzz/build.sh (see there).
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/core.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "invariant failed: %s\n", what);
        abort();
    }
}

static int parse_peer(const char *s, struct canal_addr *a)
{
    memset(a, 0, sizeof(*a));
    if (inet_pton(AF_INET, s, a->bytes) == 1) {
        a->family = 4;
        return 0;
    }
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (inet_pton(AF_INET6, s, a->bytes) == 1 && memcmp(a->bytes, mapped, 12) != 0) {
        a->family = 6;
        return 0;
    }
    return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *list = buf, *header = memchr(buf, '\n', size), *peer_text = NULL;
    if (header != NULL) {
        *header++ = '\0';
        peer_text = strchr(header, '\n');
        if (peer_text != NULL)
            *peer_text++ = '\0';
    }

    struct canal_cidr *cidrs;
    size_t n;
    canal_error_info_t err;
    int rc = canal__proxies_parse(list, &cidrs, &n, &err);
    if (rc != 0) {
        check(rc == CANAL_EINVAL && err.code == CANAL_EINVAL && err.position <= strlen(list), "error details");
        free(buf);
        return 0;
    }
    size_t tokens = 0;
    for (const char *p = list; *p;) {
        p += strspn(p, ", \t");
        if (*p) {
            tokens++;
            p += strcspn(p, ", \t");
        }
    }
    check(n == tokens, "one entry per token");
    for (size_t i = 0; i < n; i++)
        check(cidrs[i].bits <= (cidrs[i].addr.family == 4 ? 32 : 128), "prefix in range");

    struct canal_addr peer, client;
    if (header != NULL && peer_text != NULL && parse_peer(peer_text, &peer) == 0) {
        struct canal_app app;
        memset(&app, 0, sizeof(app));
        app.proxies = cidrs;
        app.nproxies = n;
        int fwd = header[0] & 1;
        canal_str_t v = {header, strlen(header)};
        int trusted = canal__client_from_headers(&app, &peer, fwd ? &v : NULL, fwd, fwd ? NULL : &v, !fwd, &client);
        check(trusted == canal__proxies_trust(&app, &peer), "trusted means the peer is a proxy");
        if (!trusted) {
            check(memcmp(&client, &peer, sizeof(peer)) == 0, "an untrusted peer is the client");
        } else if (memcmp(&client, &peer, sizeof(peer)) != 0) {
            /* the client came from the header: its text form is in there (IPv4 as written) */
            char text[INET6_ADDRSTRLEN];
            inet_ntop(client.family == 4 ? AF_INET : AF_INET6, client.bytes, text, sizeof(text));
            check(client.family == 6 || strstr(header, text) != NULL || strstr(header, "::") != NULL ||
                      strstr(header, ":ffff:") != NULL || strstr(header, ":FFFF:") != NULL,
                  "the client is an address from the header");
        }
    }
    free(cidrs);
    free(buf);
    return 0;
}
