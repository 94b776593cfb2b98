/* What a GLib application written in C sees through
 * g_network_monitor_get_default(): the `watch` output of
 * network_monitor_client.py, the same lines (with the argument `start`, the
 * first line only).
 * Built by the test: cc network_monitor_client.c $(pkg-config --cflags --libs gio-2.0) */
#include <stdio.h>
#include <gio/gio.h>

static gint64
now (void)
{
  return g_get_real_time ();
}

static void
print_values (GNetworkMonitor *monitor)
{
  printf (" %d %d %d", g_network_monitor_get_network_available (monitor),
          (int) g_network_monitor_get_connectivity (monitor), g_network_monitor_get_network_metered (monitor));
}

static void
changed (GNetworkMonitor *monitor, gboolean available, gpointer data)
{
  printf ("%" G_GINT64_FORMAT " changed", now ());
  print_values (monitor);
  printf ("\n");
  fflush (stdout);
}

static void
notified (GObject *object, GParamSpec *pspec, gpointer data)
{
  printf ("%" G_GINT64_FORMAT " notify %s", now (), pspec->name);
  print_values (G_NETWORK_MONITOR (object));
  printf ("\n");
  fflush (stdout);
}

int
main (int argc, char **argv)
{
  gint64 start = g_get_monotonic_time ();
  GNetworkMonitor *monitor = g_network_monitor_get_default ();
  double took = (g_get_monotonic_time () - start) / 1000.0;
  /* The session bus a desktop application connects to anyway; none asked
   * for when there is none (GLib would try to start one). */
  GDBusConnection *bus = g_getenv ("DBUS_SESSION_BUS_ADDRESS") ? g_bus_get_sync (G_BUS_TYPE_SESSION, NULL, NULL) : NULL;

  printf ("%" G_GINT64_FORMAT " start %s %.3f", now (), G_OBJECT_TYPE_NAME (monitor), took);
  print_values (monitor);
  printf (" %s\n", bus ? g_dbus_connection_get_unique_name (bus) : "-");
  fflush (stdout);
  /* `start`: the start line only, then exit. */
  if (argc > 1 && g_strcmp0 (argv[1], "start") == 0)
    return 0;
  g_signal_connect (monitor, "network-changed", G_CALLBACK (changed), NULL);
  g_signal_connect (monitor, "notify::network-available", G_CALLBACK (notified), NULL);
  g_signal_connect (monitor, "notify::connectivity", G_CALLBACK (notified), NULL);
  g_signal_connect (monitor, "notify::network-metered", G_CALLBACK (notified), NULL);
  g_main_loop_run (g_main_loop_new (NULL, FALSE));
  return 0;
}
