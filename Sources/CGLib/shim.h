// GLib for Swift: the main context, sources and unix fd sources.
#ifndef LIFELINE_CGLIB_SHIM_H
#define LIFELINE_CGLIB_SHIM_H

#include <glib.h>
#include <glib-unix.h>  // not pulled in by <glib.h>: g_unix_fd_source_new

static const gint LIFELINE_G_PRIORITY_DEFAULT = G_PRIORITY_DEFAULT;
static const gint LIFELINE_G_PRIORITY_HIGH = G_PRIORITY_HIGH;
static const gboolean LIFELINE_G_SOURCE_CONTINUE = G_SOURCE_CONTINUE;
static const gboolean LIFELINE_G_SOURCE_REMOVE = G_SOURCE_REMOVE;

/// `g_source_set_callback` for a unix fd source: the callback type differs from
/// GSourceFunc and C needs the cast Swift cannot write.
static inline void lifeline_g_fd_source_set_callback(GSource *source, GUnixFDSourceFunc func,
                                                     gpointer data, GDestroyNotify notify) {
    g_source_set_callback(source, (GSourceFunc)(void (*)(void))func, data, notify);
}

#endif
