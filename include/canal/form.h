/* SPDX-License-Identifier: MIT */
/**
 * @file canal/form.h
 * HTML forms in request bodies: application/x-www-form-urlencoded and multipart/form-data
 * (RFC 7578 on RFC 2046 5.1), the parsers every form reader uses (canal_req_form(), binding).
 *
 * Both parsers are iterators that allocate nothing of their own: canal_form_next() decodes
 * into a buffer the caller gives, canal_multipart_next() hands out slices of the body. The
 * request getters (canal_req_form(), canal_req_form_all()) parse the body once, on first use,
 * into request memory, and read either encoding: a multipart body's fields are its parts
 * without a filename.
 *
 * The body is buffered whole before a handler runs (libh2o 2.2.5 has no body streaming; see
 * docs/server.md, "Forms and uploads"), at most canal_config_t.max_body_size bytes, or a
 * route's canal_endpoint_spec_t.max_body.
 *
 * Errors: CANAL_ETYPE when the body is not of the parser's media type, CANAL_EBADREQ for a
 * malformed body (a 400), CANAL_ELIMIT for a multipart body past one of the limits below (a
 * 413); err (where given) says what and at which byte of the body.
 */
#ifndef CANAL_FORM_H
#define CANAL_FORM_H

#include <stddef.h>
#include "app.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- application/x-www-form-urlencoded ---- */

/**
 * Parses the next name/value pair of an urlencoded body, starting at *at (0 to begin), and
 * moves *at past it. Pairs are separated by '&'; empty pieces ("a=1&&b=2") are skipped; a
 * piece without '=' is a name with an empty value. Names and values are percent-decoded with
 * '+' as a space (canal_percent_decode(), the query's decoder) into buf, which needs
 * body.len bytes (it may be body's own memory): a pair is decoded at its own offset, so the
 * slices of earlier pairs stay valid. Duplicates come out in order, as sent.
 *
 * Returns 1 with *out set, 0 at the end, or CANAL_EBADREQ for a bad or truncated escape or
 * %00 (err, if given, has the offset of the pair; *at is left at it, so a caller that goes on
 * gets the same error).
 */
CANAL_API int canal_form_next(canal_str_t body, size_t *at, char *buf, canal_param_t *out,
                              canal_error_info_t *err);

/* ---- multipart/form-data ---- */

/** Most parts a multipart body may have; one more is CANAL_ELIMIT. */
#define CANAL_MULTIPART_MAX_PARTS 128
/** Most bytes of a part's header section (its lines, without the blank line); more is
 * CANAL_ELIMIT. */
#define CANAL_MULTIPART_MAX_HEADER 8192

/**
 * A multipart body being read: canal_multipart_init(), then canal_multipart_next() until it
 * returns 0. The caller owns it (on the stack); nothing to dispose.
 */
typedef struct canal_multipart {
    canal_str_t _body;   /**< private: the body */
    size_t _at;          /**< private: where the next part begins */
    size_t _nparts;      /**< private: parts read so far */
    int _state;          /**< private: 0 before the first delimiter, 1 in parts, 2 done, < 0 the error */
    const char *_why;    /**< private: the error's text (static) */
    size_t _where;       /**< private: where in the body the error was found */
    size_t _dlen;        /**< private: the length of _delim */
    char _delim[4 + 70]; /**< private: CRLF "--" boundary */
} canal_multipart_t;

/**
 * One part of a multipart/form-data body. Every slice points into the body (no copy) and
 * lives as long as it does.
 */
typedef struct canal_part {
    canal_str_t name;         /**< Content-Disposition's name, as sent (not decoded) */
    canal_str_t filename;     /**< its filename, as sent; base NULL for a field. A file part
                                   may have an empty one (a file input left empty) */
    canal_str_t content_type; /**< the part's Content-Type; "text/plain" if none (RFC 7578 4.4) */
    canal_str_t data;         /**< the part's bytes, any bytes (CR, LF, NUL) */
} canal_part_t;

/** 1 if the part is a file (it has a filename, perhaps empty), 0 for a field. */
#define CANAL_PART_IS_FILE(part) ((part)->filename.base != NULL)

/**
 * Finds the boundary in a Content-Type field value: the media type must be
 * multipart/form-data (ASCII case-insensitive) with a boundary parameter, quoted or not, of 1
 * to 70 characters of RFC 2046's bchars, not ending in a space. Returns 0 with *boundary (a
 * slice of content_type, without quotes), CANAL_ETYPE for another media type (or none), or
 * CANAL_EBADREQ for a missing or bad boundary or malformed parameters; err (if given) says
 * which.
 */
CANAL_API int canal_multipart_boundary(canal_str_t content_type, canal_str_t *boundary,
                                       canal_error_info_t *err);

/**
 * Starts reading body as multipart/form-data with the boundary of content_type (the
 * request's Content-Type field value: canal_multipart_boundary()). Both are borrowed and must
 * outlive mp. Returns 0, or canal_multipart_boundary()'s errors.
 */
CANAL_API int canal_multipart_init(canal_multipart_t *mp, canal_str_t content_type, canal_str_t body,
                                   canal_error_info_t *err);

/**
 * Reads the next part into *part. The preamble (before the first delimiter) and the epilogue
 * (after the closing one) are ignored. Lines of the framing end in CRLF (a bare CR or LF is
 * an error); a delimiter is CRLF "--" boundary followed by optional spaces or tabs and CRLF,
 * or by "--" for the closing one: a line that starts with "--" boundary and goes on
 * otherwise is data. Of a part's header fields, Content-Disposition (form-data, with a name
 * parameter; filename is optional; filename* is ignored, as RFC 7578 4.2 asks) is required
 * and Content-Type is optional, each at most once; others are skipped. A quoted parameter
 * ends at the next DQUOTE, so a backslash is an ordinary byte (browsers write '"' as %22 and
 * never use quoted-pairs), and no value is decoded.
 *
 * Returns 1 with *part set, 0 after the last part (the closing delimiter), or an error, which
 * stays: every later call returns it again. CANAL_EBADREQ: no delimiter at all, no closing
 * delimiter, a bad delimiter line, a part's header that runs into the next delimiter (no
 * blank line), a malformed header line (no ':', a bad name, a control byte, a folded line), a
 * missing or repeated Content-Disposition, one that is not form-data or has no name.
 * CANAL_ELIMIT: more than CANAL_MULTIPART_MAX_PARTS parts, a header section of more than
 * CANAL_MULTIPART_MAX_HEADER bytes. err (if given) says which, with the body offset.
 */
CANAL_API int canal_multipart_next(canal_multipart_t *mp, canal_part_t *part, canal_error_info_t *err);

/* ---- the request's form ---- */

/**
 * The fields of the request's form, in order, duplicates included: the pairs of an
 * application/x-www-form-urlencoded body (decoded), or the parts of a multipart/form-data body
 * that have no filename (their bytes as sent). Parsed on first use into request memory; an
 * empty body is a form without fields, whatever its Content-Type. *params (borrowed, lives as
 * long as the request) is set on success.
 *
 * Returns the number of fields, or CANAL_ETYPE (a body of another media type), CANAL_EBADREQ
 * or CANAL_ELIMIT (the parsers' errors, or an urlencoded body of more than INT32_MAX - 1
 * fields), the same on every call, with err (if given) filled.
 */
CANAL_API int canal_req_form_all(canal_req_t *req, const canal_param_t **params, canal_error_info_t *err);

/**
 * Looks a form field up (canal_req_form_all()'s fields; names compared byte for byte).
 * Returns how many times name occurs (0: absent) and sets *value (if not NULL) to the first
 * occurrence, or canal_req_form_all()'s error. Values live as long as the request.
 */
CANAL_API int canal_req_form(canal_req_t *req, const char *name, canal_str_t *value);

#ifdef __cplusplus
}
#endif

#endif
