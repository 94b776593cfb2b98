/// What every update tells the sinks besides the state: until when alerts are
/// muted, whether a notification server is on the bus, and that the daemon is
/// stopping. Each has one source (the toast's "Mute" and D-Bus `Mute`, the
/// notification sink, the daemon); every sink reads it from the update.
struct SinkNotices {
    /// µs since the epoch; 0 when not muted.
    var mutedUntil: Int64 = 0
    /// Nil while no notification sink has said (none configured).
    var notificationServerPresent: Bool?
    var stoppingAt: Int64?
    /// How well the connection works, as the probe last read it from the user's traffic.
    var quality: Quality?

    /// True when that is news.
    mutating func reportNotificationServer(present: Bool) -> Bool {
        guard notificationServerPresent != present else { return false }
        notificationServerPresent = present
        return true
    }

    /// The update a sink receives for `event`, with the holds and the jobs as they are now.
    func update(
        _ event: StateEvent, outage: Outage?, isTransition: Bool, holds: AlertHolds, jobs: JobBoard
    ) -> Update {
        var update = Update(
            event: event, isTransition: isTransition, outage: outage,
            mutedUntil: mutedUntil, notificationServerPresent: notificationServerPresent
        )
        update.alertsHeld = holds.held
        update.jobs = jobs.jobs
        update.sleep = holds.sleep
        update.stoppingAt = stoppingAt
        // Only `online` has a quality: the attribute says how well it works.
        update.event.quality = event.state == .online ? quality : nil
        return update
    }
}
