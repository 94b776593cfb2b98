// libdbusmenu-glib and the GDBus pieces of the tray icon for Swift: the casts
// and variadic GVariant constructors Swift cannot write.
#ifndef LIFELINE_CDBUSMENU_SHIM_H
#define LIFELINE_CDBUSMENU_SHIM_H

#include <gio/gio.h>
#include <libdbusmenu-glib/server.h>
#include <libdbusmenu-glib/menuitem.h>

/// A menu item's "item-activated" (a click, or dbusmenu's Event "clicked").
static inline gulong lifeline_menuitem_connect_activated(DbusmenuMenuitem *item,
                                                         void (*callback)(DbusmenuMenuitem *, guint, gpointer),
                                                         gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(item, DBUSMENU_MENUITEM_SIGNAL_ITEM_ACTIVATED, G_CALLBACK(callback), data, destroy,
                                 (GConnectFlags)0);
}

/// A menu item's "about-to-show" (the host is opening its submenu).
static inline gulong lifeline_menuitem_connect_about_to_show(DbusmenuMenuitem *item,
                                                             gboolean (*callback)(DbusmenuMenuitem *, gpointer),
                                                             gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(item, DBUSMENU_MENUITEM_SIGNAL_ABOUT_TO_SHOW, G_CALLBACK(callback), data, destroy,
                                 (GConnectFlags)0);
}

/// `(s)`: a signal's or a call's single string argument.
static inline GVariant *lifeline_variant_tuple_string(const char *s) {
    return g_variant_new("(s)", s);
}

/// StatusNotifierItem's ToolTip, `(sa(iiay)ss)`: icon name, no pixmaps, title, text.
static inline GVariant *lifeline_variant_tooltip(const char *icon, const char *title, const char *text) {
    return g_variant_new("(s@a(iiay)ss)", icon, g_variant_new_array(G_VARIANT_TYPE("(iiay)"), NULL, 0), title, text);
}

/// An int32 argument of a method call's tuple, or 0 when it is not one.
static inline gint32 lifeline_variant_child_int32(GVariant *tuple, gsize index) {
    if (!g_variant_is_container(tuple) || index >= g_variant_n_children(tuple)) return 0;
    GVariant *child = g_variant_get_child_value(tuple, index);
    gint32 value = g_variant_is_of_type(child, G_VARIANT_TYPE_INT32) ? g_variant_get_int32(child) : 0;
    g_variant_unref(child);
    return value;
}

/// Exports one interface at `path`; GDBus copies the table. Method calls and
/// property reads come on the thread-default context of the caller's thread.
static inline guint lifeline_dbus_register_object(GDBusConnection *connection, const char *path,
                                                  GDBusInterfaceInfo *interface,
                                                  GDBusInterfaceMethodCallFunc method_call,
                                                  GDBusInterfaceGetPropertyFunc get_property,
                                                  gpointer data, GDestroyNotify destroy, GError **error) {
    GDBusInterfaceVTable vtable = { method_call, get_property, NULL, { 0 } };
    return g_dbus_connection_register_object(connection, path, interface, &vtable, data, destroy, error);
}

/// A connection's "closed": the bus went away (or the connection was closed).
static inline gulong lifeline_dbus_connection_connect_closed(GDBusConnection *connection,
                                                             void (*callback)(GDBusConnection *, gboolean, GError *, gpointer),
                                                             gpointer data, GClosureNotify destroy) {
    return g_signal_connect_data(connection, "closed", G_CALLBACK(callback), data, destroy, (GConnectFlags)0);
}

static inline void lifeline_dbusmenu_object_unref(gpointer object) { g_object_unref(object); }

#endif
