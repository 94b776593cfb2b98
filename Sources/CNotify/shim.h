// libnotify (and the bits of GObject/GIO it needs) for Swift.
#ifndef LIFELINE_CNOTIFY_SHIM_H
#define LIFELINE_CNOTIFY_SHIM_H

#include <libnotify/notify.h>
#include <gio/gio.h>

/// The "closed" signal: g_signal_connect_data needs G_CALLBACK's cast, which Swift cannot write.
static inline gulong lifeline_notify_connect_closed(NotifyNotification *n,
                                                    void (*callback)(NotifyNotification *, gpointer),
                                                    gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(n, "closed", G_CALLBACK(callback), data, destroy, (GConnectFlags)0);
}

static inline void lifeline_notify_set_string_hint(NotifyNotification *n, const char *key, const char *value) {
    notify_notification_set_hint(n, key, g_variant_new_string(value));
}

static inline void lifeline_notify_set_bool_hint(NotifyNotification *n, const char *key, gboolean value) {
    notify_notification_set_hint(n, key, g_variant_new_boolean(value));
}

/// The id the server gave the notification; 0 until it was shown. libnotify
/// sends it as `replaces_id` with the next show.
static inline guint lifeline_notify_id(NotifyNotification *n) {
    gint id = 0;
    g_object_get(n, "id", &id, NULL);
    return (guint)id;
}

static inline void lifeline_g_object_unref(gpointer object) { g_object_unref(object); }

#endif
