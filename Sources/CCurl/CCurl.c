#include "CCurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* The libcurl functions Lifeline calls (without their curl_ prefix). */
#define LIFELINE_CURL_FUNCTIONS(X)                                                            \
    X(global_init) X(easy_strerror) X(easy_init) X(easy_cleanup) X(easy_setopt) X(easy_getinfo) \
    X(multi_init) X(multi_cleanup) X(multi_add_handle) X(multi_remove_handle) X(multi_perform) \
    X(multi_poll) X(multi_wakeup) X(multi_info_read) X(slist_append) X(slist_free_all)

/* Each pointer has the type of libcurl's own declaration in <curl/curl.h>. */
struct curl_functions {
#define LIFELINE_CURL_FIELD(name) __typeof__(curl_##name) *name;
    LIFELINE_CURL_FUNCTIONS(LIFELINE_CURL_FIELD)
#undef LIFELINE_CURL_FIELD
};

/* Written once, under pthread_once, before any caller sees lifeline_curl_load return 0. */
static struct curl_functions curl;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_status = -1;
static char load_error[512];

/* Opens `soname` and resolves every function into `table`; on failure says why in `error` and closes it again. */
static void *open_library(const char *soname, struct curl_functions *table, char *error, size_t size) {
    if (size > 0) error[0] = '\0';
    dlerror();
    void *library = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        if (why == NULL) why = "unknown error";
        /* dlerror names the file it tried, mostly; when it does not, say which. */
        if (strstr(why, soname) != NULL) {
            snprintf(error, size, "%s", why);
        } else {
            snprintf(error, size, "%s: %s", soname, why);
        }
        return NULL;
    }
#define LIFELINE_CURL_RESOLVE(name)                                                           \
    {                                                                                         \
        dlerror();                                                                            \
        void *symbol = dlsym(library, "curl_" #name);                                         \
        if (symbol == NULL) {                                                                 \
            const char *why = dlerror();                                                      \
            snprintf(error, size, "%s has no function curl_" #name "%s%s", soname,            \
                     why != NULL ? ": " : "", why != NULL ? why : "");                        \
            dlclose(library);                                                                 \
            return NULL;                                                                      \
        }                                                                                     \
        /* POSIX: a function's address comes back from dlsym as a void *. */                  \
        memcpy(&table->name, &symbol, sizeof symbol);                                         \
    }
    LIFELINE_CURL_FUNCTIONS(LIFELINE_CURL_RESOLVE)
#undef LIFELINE_CURL_RESOLVE
    return library;
}

/* Debian's libcurl for GnuTLS first (the package names it as a dependency); libcurl.so.4 is the same ABI built with OpenSSL. */
static void load(void) {
    static const char *const names[] = {"libcurl-gnutls.so.4", "libcurl.so.4"};
    char fallback[256];
    struct curl_functions table;
    if (open_library(names[0], &table, load_error, sizeof load_error) == NULL
        && open_library(names[1], &table, fallback, sizeof fallback) == NULL) {
        /* The first library's reason is the one to act on; the fallback's is added after it. */
        size_t used = strlen(load_error);
        snprintf(load_error + used, sizeof load_error - used, "; %s", fallback);
        return;
    }
    curl = table;
    load_status = 0;
}

int lifeline_curl_load(char *error, size_t size) {
    pthread_once(&load_once, load);
    if (load_status != 0 && size > 0) snprintf(error, size, "%s", load_error);
    return load_status;
}

int lifeline_curl_load_named(const char *soname, char *error, size_t size) {
    struct curl_functions table;
    void *library = open_library(soname, &table, error, size);
    if (library == NULL) return -1;
    dlclose(library);
    return 0;
}

CURLcode lifeline_curl_global_init(long flags) { return curl.global_init(flags); }
const char *lifeline_curl_easy_strerror(CURLcode code) { return curl.easy_strerror(code); }
CURL *lifeline_curl_easy_init(void) { return curl.easy_init(); }
void lifeline_curl_easy_cleanup(CURL *handle) { curl.easy_cleanup(handle); }

CURLM *lifeline_curl_multi_init(void) { return curl.multi_init(); }
CURLMcode lifeline_curl_multi_cleanup(CURLM *multi) { return curl.multi_cleanup(multi); }
CURLMcode lifeline_curl_multi_add_handle(CURLM *multi, CURL *handle) { return curl.multi_add_handle(multi, handle); }
CURLMcode lifeline_curl_multi_remove_handle(CURLM *multi, CURL *handle) { return curl.multi_remove_handle(multi, handle); }
CURLMcode lifeline_curl_multi_perform(CURLM *multi, int *running) { return curl.multi_perform(multi, running); }
CURLMcode lifeline_curl_multi_poll(CURLM *multi, struct curl_waitfd *extra, unsigned int count, int timeout_ms, int *ready) {
    return curl.multi_poll(multi, extra, count, timeout_ms, ready);
}
CURLMcode lifeline_curl_multi_wakeup(CURLM *multi) { return curl.multi_wakeup(multi); }
CURLMsg *lifeline_curl_multi_info_read(CURLM *multi, int *left) { return curl.multi_info_read(multi, left); }

struct curl_slist *lifeline_curl_slist_append(struct curl_slist *list, const char *text) { return curl.slist_append(list, text); }
void lifeline_curl_slist_free_all(struct curl_slist *list) { curl.slist_free_all(list); }

CURLcode lifeline_curl_set_long(CURL *h, CURLoption option, long value) { return curl.easy_setopt(h, option, value); }
CURLcode lifeline_curl_set_str(CURL *h, CURLoption option, const char *value) { return curl.easy_setopt(h, option, value); }
CURLcode lifeline_curl_set_ptr(CURL *h, CURLoption option, void *value) { return curl.easy_setopt(h, option, value); }
CURLcode lifeline_curl_set_off(CURL *h, CURLoption option, curl_off_t value) { return curl.easy_setopt(h, option, value); }
CURLcode lifeline_curl_set_slist(CURL *h, CURLoption option, struct curl_slist *value) { return curl.easy_setopt(h, option, value); }
CURLcode lifeline_curl_set_data_function(CURL *h, CURLoption option, lifeline_curl_data_fn fn) { return curl.easy_setopt(h, option, fn); }
CURLcode lifeline_curl_set_xferinfo_function(CURL *h, lifeline_curl_xferinfo_fn fn) {
    return curl.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, fn);
}

CURLcode lifeline_curl_get_long(CURL *h, CURLINFO info, long *out) { return curl.easy_getinfo(h, info, out); }
CURLcode lifeline_curl_get_str(CURL *h, CURLINFO info, char **out) { return curl.easy_getinfo(h, info, out); }
CURLcode lifeline_curl_get_off(CURL *h, CURLINFO info, curl_off_t *out) { return curl.easy_getinfo(h, info, out); }
