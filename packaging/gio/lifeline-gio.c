/* Lifeline's GIO module: GLib's GNetworkMonitor (the `gio-network-monitor`
 * extension point) answered from the Lifeline daemon's D-Bus service.
 *
 * Every GLib application that asks g_network_monitor_get_default(), and the
 * desktop portal's NetworkMonitor that sandboxed applications ask, gets the
 * daemon's published state:
 *   online → FULL, portal → PORTAL, limited → LIMITED, offline → LOCAL;
 *   network-available is FALSE only when offline; network-metered is Metered;
 *   network-changed is emitted once per published transition (a new Sequence)
 *   or change of those three values, never for a route or an address.
 *
 * It is loaded into processes written in any language, so it is plain C with
 * GIO only: no thread, no timer, no runtime of its own. Everything runs on the
 * main context that was the thread's default when the monitor was made.
 *
 * Initialisation fails, and GIO takes its next implementation, when the
 * daemon does not own its name on the session bus or does not answer within
 * INIT_TIMEOUT_MS. Nothing here starts the daemon (no bus activation).
 *
 * Only the name's current owner is believed: the owner comes from the bus
 * (GetNameOwner, then NameOwnerChanged from the bus itself), and a
 * PropertiesChanged from any other sender is dropped. While no one owns the
 * name, or the owner says `unknown`, there is no verdict, and the monitor says
 * what GLib says when it knows nothing: network available, FULL, not metered. */

#include <string.h>
#include <gio/gio.h>

#define LIFELINE_NAME "org.lifeline.Lifeline1"
#define LIFELINE_PATH "/org/lifeline/Lifeline1"
#define LIFELINE_INTERFACE "org.lifeline.Lifeline1"
/* Above NetworkManager's implementation (30), below the portal's (40): on the
 * host Lifeline answers, in a sandbox the portal does (and the portal, on the
 * host, asks Lifeline). */
#define LIFELINE_PRIORITY 35
/* How long an application's start may wait for a daemon that owns the name
 * but does not answer (stopped, or hung): then GIO falls back. A daemon that
 * answers takes well under a millisecond. */
#define INIT_TIMEOUT_MS 250

typedef struct {
  gboolean available;
  gboolean metered;
  GNetworkConnectivity connectivity;
} Verdict;

typedef struct {
  GObject parent;
  GDBusConnection *bus;
  guint owner_subscription;
  guint properties_subscription;
  /* The unique name that owns LIFELINE_NAME; NULL while no one does. */
  char *owner;
  /* The GetAll under way for the current owner. */
  GCancellable *loading;
  /* What the owner said last (NULL state: nothing yet). */
  char *state;
  gboolean daemon_metered;
  guint64 sequence;
  /* What applications were told. */
  Verdict told;
} LifelineNetworkMonitor;

typedef struct {
  GObjectClass parent_class;
} LifelineNetworkMonitorClass;

enum {
  PROP_0,
  PROP_NETWORK_AVAILABLE,
  PROP_NETWORK_METERED,
  PROP_CONNECTIVITY
};

static void lifeline_network_monitor_iface_init (GNetworkMonitorInterface *iface);
static void lifeline_network_monitor_initable_iface_init (GInitableIface *iface);

GType lifeline_network_monitor_get_type (void);
G_DEFINE_TYPE_WITH_CODE (LifelineNetworkMonitor, lifeline_network_monitor, G_TYPE_OBJECT,
                         G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, lifeline_network_monitor_initable_iface_init)
                         G_IMPLEMENT_INTERFACE (G_TYPE_NETWORK_MONITOR, lifeline_network_monitor_iface_init))

#define LIFELINE_NETWORK_MONITOR(o) (G_TYPE_CHECK_INSTANCE_CAST ((o), lifeline_network_monitor_get_type (), LifelineNetworkMonitor))

static const Verdict no_verdict = { TRUE, FALSE, G_NETWORK_CONNECTIVITY_FULL };

static Verdict
verdict_of (const LifelineNetworkMonitor *self)
{
  Verdict v = no_verdict;
  const char *state = self->owner ? self->state : NULL;

  if (state == NULL)
    return v;
  v.metered = self->daemon_metered;
  if (strcmp (state, "online") == 0)
    v.connectivity = G_NETWORK_CONNECTIVITY_FULL;
  else if (strcmp (state, "portal") == 0)
    v.connectivity = G_NETWORK_CONNECTIVITY_PORTAL;
  else if (strcmp (state, "limited") == 0)
    v.connectivity = G_NETWORK_CONNECTIVITY_LIMITED;
  else if (strcmp (state, "offline") == 0)
    {
      v.available = FALSE;
      v.connectivity = G_NETWORK_CONNECTIVITY_LOCAL;
    }
  else
    v = no_verdict;  /* `unknown`: nothing decided yet */
  return v;
}

/* Takes the values it knows from an a{sv} of the daemon's properties; returns
 * whether a new transition was published: Sequence moved to a decided state.
 * (A daemon that starts moves it while still `unknown`, to the number its
 * last run reached; that is no transition.) */
static gboolean
take_properties (LifelineNetworkMonitor *self, GVariant *properties)
{
  const char *state;
  gboolean metered;
  guint64 sequence;
  gboolean moved = FALSE;

  if (g_variant_lookup (properties, "State", "&s", &state))
    {
      g_free (self->state);
      self->state = g_strdup (state);
    }
  if (g_variant_lookup (properties, "Metered", "b", &metered))
    self->daemon_metered = metered;
  if (g_variant_lookup (properties, "Sequence", "t", &sequence))
    {
      moved = sequence != self->sequence;
      self->sequence = sequence;
    }
  return moved && self->state != NULL && strcmp (self->state, "unknown") != 0;
}

/* Tells applications what changed: one notify per property, then one
 * network-changed, as GLib's own monitors do. */
static void
announce (LifelineNetworkMonitor *self, gboolean transition)
{
  Verdict now = verdict_of (self);
  Verdict was = self->told;

  if (!transition && now.available == was.available && now.metered == was.metered
      && now.connectivity == was.connectivity)
    return;
  self->told = now;
  g_object_freeze_notify (G_OBJECT (self));
  if (now.available != was.available)
    g_object_notify (G_OBJECT (self), "network-available");
  if (now.metered != was.metered)
    g_object_notify (G_OBJECT (self), "network-metered");
  if (now.connectivity != was.connectivity)
    g_object_notify (G_OBJECT (self), "connectivity");
  g_object_thaw_notify (G_OBJECT (self));
  g_signal_emit_by_name (self, "network-changed", now.available);
}

static void
loaded (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GError *error = NULL;
  GVariant *reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  LifelineNetworkMonitor *self;
  GVariant *properties;
  gboolean moved;

  if (reply == NULL)
    {
      /* Cancelled: the owner left, or the monitor went; `self` may be gone. */
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_clear_object (&LIFELINE_NETWORK_MONITOR (user_data)->loading);
      g_error_free (error);
      return;
    }
  self = LIFELINE_NETWORK_MONITOR (user_data);
  g_clear_object (&self->loading);
  properties = g_variant_get_child_value (reply, 0);
  moved = take_properties (self, properties);
  g_variant_unref (properties);
  g_variant_unref (reply);
  announce (self, moved);
}

/* Reads every property from `owner` (a unique name, so the answer comes from
 * the process that owns the name now, and no one is started). */
static void
load (LifelineNetworkMonitor *self)
{
  if (self->loading)
    g_cancellable_cancel (self->loading);
  g_clear_object (&self->loading);
  self->loading = g_cancellable_new ();
  g_dbus_connection_call (self->bus, self->owner, LIFELINE_PATH, "org.freedesktop.DBus.Properties", "GetAll",
                          g_variant_new ("(s)", LIFELINE_INTERFACE), G_VARIANT_TYPE ("(a{sv})"),
                          G_DBUS_CALL_FLAGS_NO_AUTO_START, -1, self->loading, loaded, self);
}

static void
owner_changed (GDBusConnection *bus, const char *sender, const char *path, const char *interface,
               const char *member, GVariant *parameters, gpointer user_data)
{
  LifelineNetworkMonitor *self = user_data;
  const char *name, *old_owner, *new_owner;

  if (g_strcmp0 (sender, "org.freedesktop.DBus") != 0 || !g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(sss)")))
    return;
  g_variant_get (parameters, "(&s&s&s)", &name, &old_owner, &new_owner);
  if (strcmp (name, LIFELINE_NAME) != 0)
    return;
  /* A change queued before GetNameOwner answered is already in its answer. */
  if (g_strcmp0 (old_owner, self->owner ? self->owner : "") != 0)
    return;

  if (self->loading)
    g_cancellable_cancel (self->loading);
  g_clear_object (&self->loading);
  g_clear_pointer (&self->owner, g_free);
  g_clear_pointer (&self->state, g_free);
  if (new_owner[0] != '\0')
    {
      self->owner = g_strdup (new_owner);
      load (self);
    }
  announce (self, FALSE);
}

static void
properties_changed (GDBusConnection *bus, const char *sender, const char *path, const char *interface,
                    const char *member, GVariant *parameters, gpointer user_data)
{
  LifelineNetworkMonitor *self = user_data;
  const char *changed_interface;
  GVariant *changed;
  gboolean moved;

  /* Believed from the name's current owner only: a signal addressed to this
   * process by any other peer of the bus reaches it whatever the match rule. */
  if (self->owner == NULL || g_strcmp0 (sender, self->owner) != 0
      || !g_variant_is_of_type (parameters, G_VARIANT_TYPE ("(sa{sv}as)")))
    return;
  g_variant_get (parameters, "(&s@a{sv}*)", &changed_interface, &changed, NULL);
  if (strcmp (changed_interface, LIFELINE_INTERFACE) == 0)
    {
      moved = take_properties (self, changed);
      announce (self, moved);
    }
  g_variant_unref (changed);
}

/* Whether the process has a session bus to connect to, found as GLib finds
 * it. Without one GLib would try to start one (dbus-launch, when $DISPLAY is
 * set: a root GUI program, a system service): no daemon can be there anyway. */
static gboolean
session_bus_known (void)
{
  const char *address = g_getenv ("DBUS_SESSION_BUS_ADDRESS");
  char *socket;
  gboolean known;

  if (address != NULL && address[0] != '\0')
    return TRUE;
  socket = g_build_filename (g_get_user_runtime_dir (), "bus", NULL);
  known = g_file_test (socket, G_FILE_TEST_EXISTS);
  g_free (socket);
  return known;
}

static gboolean
lifeline_network_monitor_initable_init (GInitable *initable, GCancellable *cancellable, GError **error)
{
  LifelineNetworkMonitor *self = LIFELINE_NETWORK_MONITOR (initable);
  GVariant *reply, *properties;

  if (!session_bus_known ())
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "no session bus: the Lifeline daemon is not running");
      return FALSE;
    }
  self->bus = g_bus_get_sync (G_BUS_TYPE_SESSION, cancellable, error);
  if (self->bus == NULL)
    return FALSE;
  /* Subscribed before asking, so no change between the answer and now is missed. */
  self->owner_subscription =
    g_dbus_connection_signal_subscribe (self->bus, "org.freedesktop.DBus", "org.freedesktop.DBus", "NameOwnerChanged",
                                        "/org/freedesktop/DBus", LIFELINE_NAME, G_DBUS_SIGNAL_FLAGS_NONE,
                                        owner_changed, self, NULL);
  self->properties_subscription =
    g_dbus_connection_signal_subscribe (self->bus, LIFELINE_NAME, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                        LIFELINE_PATH, LIFELINE_INTERFACE, G_DBUS_SIGNAL_FLAGS_NONE,
                                        properties_changed, self, NULL);

  /* The bus answers this one itself, at once: no daemon, no wait. */
  reply = g_dbus_connection_call_sync (self->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                       "GetNameOwner", g_variant_new ("(s)", LIFELINE_NAME), G_VARIANT_TYPE ("(s)"),
                                       G_DBUS_CALL_FLAGS_NO_AUTO_START, INIT_TIMEOUT_MS, cancellable, NULL);
  if (reply == NULL)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "the Lifeline daemon is not running");
      return FALSE;
    }
  g_variant_get (reply, "(s)", &self->owner);
  g_variant_unref (reply);

  reply = g_dbus_connection_call_sync (self->bus, self->owner, LIFELINE_PATH, "org.freedesktop.DBus.Properties", "GetAll",
                                       g_variant_new ("(s)", LIFELINE_INTERFACE), G_VARIANT_TYPE ("(a{sv})"),
                                       G_DBUS_CALL_FLAGS_NO_AUTO_START, INIT_TIMEOUT_MS, cancellable, error);
  if (reply == NULL)
    return FALSE;
  properties = g_variant_get_child_value (reply, 0);
  take_properties (self, properties);
  g_variant_unref (properties);
  g_variant_unref (reply);
  self->told = verdict_of (self);
  return TRUE;
}

/* can_reach and can_reach_async as GLib's own monitors answer them (its base
 * class, which the NetworkManager and netlink monitors use): offline, the
 * network is unreachable; otherwise the host is reachable once it resolves to
 * an Internet address (through the proxy resolver, as GLib does). Lifeline
 * knows a path to the internet, not a table of routes, so any address counts
 * while it is not offline, as for GLib with a default route of each family. */

static gboolean
lifeline_network_monitor_can_reach (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                    GCancellable *cancellable, GError **error)
{
  LifelineNetworkMonitor *self = LIFELINE_NETWORK_MONITOR (monitor);
  GSocketAddressEnumerator *enumerator;
  GSocketAddress *address;

  if (!self->told.available)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE, g_dgettext ("glib20", "Network unreachable"));
      return FALSE;
    }
  enumerator = g_socket_connectable_proxy_enumerate (connectable);
  while ((address = g_socket_address_enumerator_next (enumerator, cancellable, error)) != NULL)
    {
      gboolean inet = G_IS_INET_SOCKET_ADDRESS (address);
      g_object_unref (address);
      if (inet)
        {
          g_object_unref (enumerator);
          return TRUE;
        }
    }
  g_object_unref (enumerator);
  /* Resolution failed or was cancelled (the error says which), or no address was one. */
  if (error && !*error)
    g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE, g_dgettext ("glib20", "Host unreachable"));
  return FALSE;
}

static void
next_address (GObject *source, GAsyncResult *result, gpointer user_data)
{
  GSocketAddressEnumerator *enumerator = G_SOCKET_ADDRESS_ENUMERATOR (source);
  GTask *task = user_data;
  GError *error = NULL;
  GSocketAddress *address = g_socket_address_enumerator_next_finish (enumerator, result, &error);

  if (address == NULL)
    {
      if (error)
        g_task_return_error (task, error);
      else
        g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE, "%s",
                                 g_dgettext ("glib20", "Host unreachable"));
      g_object_unref (task);
      return;
    }
  if (G_IS_INET_SOCKET_ADDRESS (address))
    {
      g_object_unref (address);
      g_task_return_boolean (task, TRUE);
      g_object_unref (task);
      return;
    }
  g_object_unref (address);
  g_socket_address_enumerator_next_async (enumerator, g_task_get_cancellable (task), next_address, task);
}

static void
lifeline_network_monitor_can_reach_async (GNetworkMonitor *monitor, GSocketConnectable *connectable,
                                          GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data)
{
  LifelineNetworkMonitor *self = LIFELINE_NETWORK_MONITOR (monitor);
  GTask *task = g_task_new (monitor, cancellable, callback, user_data);
  GSocketAddressEnumerator *enumerator;

  g_task_set_source_tag (task, lifeline_network_monitor_can_reach_async);
  if (!self->told.available)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE, "%s",
                               g_dgettext ("glib20", "Network unreachable"));
      g_object_unref (task);
      return;
    }
  enumerator = g_socket_connectable_proxy_enumerate (connectable);
  g_socket_address_enumerator_next_async (enumerator, cancellable, next_address, task);
  g_object_unref (enumerator);
}

static gboolean
lifeline_network_monitor_can_reach_finish (GNetworkMonitor *monitor, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, monitor), FALSE);
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
lifeline_network_monitor_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  LifelineNetworkMonitor *self = LIFELINE_NETWORK_MONITOR (object);

  switch (prop_id)
    {
    case PROP_NETWORK_AVAILABLE:
      g_value_set_boolean (value, self->told.available);
      break;
    case PROP_NETWORK_METERED:
      g_value_set_boolean (value, self->told.metered);
      break;
    case PROP_CONNECTIVITY:
      g_value_set_enum (value, self->told.connectivity);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
lifeline_network_monitor_finalize (GObject *object)
{
  LifelineNetworkMonitor *self = LIFELINE_NETWORK_MONITOR (object);

  /* No callback runs after this: GDBus checks the subscription before it
   * calls, and a cancelled GetAll's callback does not touch the monitor. */
  if (self->loading)
    g_cancellable_cancel (self->loading);
  g_clear_object (&self->loading);
  if (self->bus)
    {
      if (self->owner_subscription)
        g_dbus_connection_signal_unsubscribe (self->bus, self->owner_subscription);
      if (self->properties_subscription)
        g_dbus_connection_signal_unsubscribe (self->bus, self->properties_subscription);
      g_object_unref (self->bus);
    }
  g_free (self->owner);
  g_free (self->state);
  G_OBJECT_CLASS (lifeline_network_monitor_parent_class)->finalize (object);
}

static void
lifeline_network_monitor_init (LifelineNetworkMonitor *self)
{
  self->told = no_verdict;
}

static void
lifeline_network_monitor_class_init (LifelineNetworkMonitorClass *class)
{
  GObjectClass *object_class = G_OBJECT_CLASS (class);

  object_class->get_property = lifeline_network_monitor_get_property;
  object_class->finalize = lifeline_network_monitor_finalize;
  g_object_class_override_property (object_class, PROP_NETWORK_AVAILABLE, "network-available");
  g_object_class_override_property (object_class, PROP_NETWORK_METERED, "network-metered");
  g_object_class_override_property (object_class, PROP_CONNECTIVITY, "connectivity");
}

static void
lifeline_network_monitor_iface_init (GNetworkMonitorInterface *iface)
{
  iface->can_reach = lifeline_network_monitor_can_reach;
  iface->can_reach_async = lifeline_network_monitor_can_reach_async;
  iface->can_reach_finish = lifeline_network_monitor_can_reach_finish;
}

static void
lifeline_network_monitor_initable_iface_init (GInitableIface *iface)
{
  iface->init = lifeline_network_monitor_initable_init;
}

/* The entry points GIO looks up in a module. */

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  /* The type is registered statically, so the module stays loaded once GIO
   * has loaded it (GLib's own dconf module does the same). */
  g_type_module_use (G_TYPE_MODULE (module));
  g_io_extension_point_implement (G_NETWORK_MONITOR_EXTENSION_POINT_NAME, lifeline_network_monitor_get_type (),
                                  "lifeline", LIFELINE_PRIORITY);
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
}

G_MODULE_EXPORT char **
g_io_module_query (void)
{
  char *points[] = { G_NETWORK_MONITOR_EXTENSION_POINT_NAME, NULL };
  return g_strdupv (points);
}
