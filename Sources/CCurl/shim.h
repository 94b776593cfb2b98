#ifndef LIFELINE_CCURL_SHIM_H
#define LIFELINE_CCURL_SHIM_H

#include <curl/curl.h>

/*
 * curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call.
 * These typed wrappers pass each argument with the C type libcurl reads for that
 * option (long, char *, void *, curl_off_t or a function pointer), so a wrong
 * type is a compile error instead of undefined behaviour.
 */

typedef size_t (*lifeline_curl_data_fn)(char *data, size_t size, size_t count, void *user);
typedef int (*lifeline_curl_xferinfo_fn)(void *user, curl_off_t dltotal, curl_off_t dlnow,
                                          curl_off_t ultotal, curl_off_t ulnow);

static inline CURLcode lifeline_curl_set_long(CURL *h, CURLoption option, long value) {
    return curl_easy_setopt(h, option, value);
}

static inline CURLcode lifeline_curl_set_str(CURL *h, CURLoption option, const char *value) {
    return curl_easy_setopt(h, option, value);
}

static inline CURLcode lifeline_curl_set_ptr(CURL *h, CURLoption option, void *value) {
    return curl_easy_setopt(h, option, value);
}

static inline CURLcode lifeline_curl_set_off(CURL *h, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(h, option, value);
}

static inline CURLcode lifeline_curl_set_slist(CURL *h, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(h, option, value);
}

/* CURLOPT_WRITEFUNCTION or CURLOPT_HEADERFUNCTION. */
static inline CURLcode lifeline_curl_set_data_function(CURL *h, CURLoption option, lifeline_curl_data_fn fn) {
    return curl_easy_setopt(h, option, fn);
}

static inline CURLcode lifeline_curl_set_xferinfo_function(CURL *h, lifeline_curl_xferinfo_fn fn) {
    return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, fn);
}

static inline CURLcode lifeline_curl_get_long(CURL *h, CURLINFO info, long *out) {
    return curl_easy_getinfo(h, info, out);
}

static inline CURLcode lifeline_curl_get_str(CURL *h, CURLINFO info, char **out) {
    return curl_easy_getinfo(h, info, out);
}

static inline CURLcode lifeline_curl_get_off(CURL *h, CURLINFO info, curl_off_t *out) {
    return curl_easy_getinfo(h, info, out);
}

/* Macros Swift does not import (they expand to expressions of other macros). */
static const long LIFELINE_CURL_GLOBAL_DEFAULT = CURL_GLOBAL_DEFAULT;
static const long LIFELINE_CURL_IPRESOLVE_WHATEVER = CURL_IPRESOLVE_WHATEVER;
static const long LIFELINE_CURL_IPRESOLVE_V4 = CURL_IPRESOLVE_V4;
static const long LIFELINE_CURL_IPRESOLVE_V6 = CURL_IPRESOLVE_V6;
static const size_t LIFELINE_CURL_ERROR_SIZE = CURL_ERROR_SIZE;

#endif
