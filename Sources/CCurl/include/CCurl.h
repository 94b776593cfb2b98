#ifndef LIFELINE_CCURL_H
#define LIFELINE_CCURL_H

/*
 * libcurl, loaded at run time: the daemon links no libcurl, so the 26 libraries
 * only libcurl pulls in (GnuTLS, p11-kit, Kerberos, LDAP, SSH, RTMP, nghttp2…)
 * are mapped only once a probe needs them, not by every daemon all day.
 *
 * <curl/curl.h> gives the types and constants; every call goes through a
 * lifeline_curl_* function below, which calls libcurl through the pointer
 * lifeline_curl_load found with dlsym. A curl_* call made directly would
 * not link: nothing links libcurl.
 */
#include <curl/curl.h>
#include <stddef.h>

/*
 * Loads libcurl once for the whole process (libcurl-gnutls.so.4, else
 * libcurl.so.4: the same ABI built with OpenSSL) and resolves every function
 * below. Thread-safe; later calls return the first call's result at once.
 * Returns 0, or -1 with a message naming the library and what failed (its
 * dlerror text, or the missing function) in `error` (`size` bytes, always
 * terminated). Every other function here may be called only after a 0.
 */
int lifeline_curl_load(char *error, size_t size);

/*
 * The same opening and resolving, for `soname` alone, into a table that is
 * thrown away (the library is closed again): for tests of the failures.
 * Never changes what lifeline_curl_load loaded.
 */
int lifeline_curl_load_named(const char *soname, char *error, size_t size);

CURLcode lifeline_curl_global_init(long flags);
const char *lifeline_curl_easy_strerror(CURLcode code);
CURL *lifeline_curl_easy_init(void);
void lifeline_curl_easy_cleanup(CURL *handle);

CURLM *lifeline_curl_multi_init(void);
CURLMcode lifeline_curl_multi_cleanup(CURLM *multi);
CURLMcode lifeline_curl_multi_add_handle(CURLM *multi, CURL *handle);
CURLMcode lifeline_curl_multi_remove_handle(CURLM *multi, CURL *handle);
CURLMcode lifeline_curl_multi_perform(CURLM *multi, int *running);
CURLMcode lifeline_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned int count, int timeout_ms, int *ready);
/* The one call libcurl allows on a multi handle from another thread. */
CURLMcode lifeline_curl_multi_wakeup(CURLM *multi);
CURLMsg *lifeline_curl_multi_info_read(CURLM *multi, int *left);

struct curl_slist *lifeline_curl_slist_append(struct curl_slist *list, const char *text);
void lifeline_curl_slist_free_all(struct curl_slist *list);

/*
 * curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call.
 * These typed wrappers pass each argument with the C type libcurl reads for that
 * option (long, char *, void *, curl_off_t or a function pointer), so a wrong
 * type is a compile error instead of undefined behaviour.
 */

typedef size_t (*lifeline_curl_data_fn)(char *data, size_t size, size_t count, void *user);
typedef int (*lifeline_curl_xferinfo_fn)(void *user, curl_off_t dltotal, curl_off_t dlnow,
                                          curl_off_t ultotal, curl_off_t ulnow);

CURLcode lifeline_curl_set_long(CURL *h, CURLoption option, long value);
CURLcode lifeline_curl_set_str(CURL *h, CURLoption option, const char *value);
CURLcode lifeline_curl_set_ptr(CURL *h, CURLoption option, void *value);
CURLcode lifeline_curl_set_off(CURL *h, CURLoption option, curl_off_t value);
CURLcode lifeline_curl_set_slist(CURL *h, CURLoption option, struct curl_slist *value);
/* CURLOPT_WRITEFUNCTION or CURLOPT_HEADERFUNCTION. */
CURLcode lifeline_curl_set_data_function(CURL *h, CURLoption option, lifeline_curl_data_fn fn);
CURLcode lifeline_curl_set_xferinfo_function(CURL *h, lifeline_curl_xferinfo_fn fn);

CURLcode lifeline_curl_get_long(CURL *h, CURLINFO info, long *out);
CURLcode lifeline_curl_get_str(CURL *h, CURLINFO info, char **out);
CURLcode lifeline_curl_get_off(CURL *h, CURLINFO info, curl_off_t *out);

/* Macros Swift does not import (they expand to expressions of other macros). */
static const long LIFELINE_CURL_GLOBAL_DEFAULT = CURL_GLOBAL_DEFAULT;
static const long LIFELINE_CURL_IPRESOLVE_WHATEVER = CURL_IPRESOLVE_WHATEVER;
static const long LIFELINE_CURL_IPRESOLVE_V4 = CURL_IPRESOLVE_V4;
static const long LIFELINE_CURL_IPRESOLVE_V6 = CURL_IPRESOLVE_V6;
static const size_t LIFELINE_CURL_ERROR_SIZE = CURL_ERROR_SIZE;

#endif
