/// Outages as they are published: one begins with a published degradation and
/// ends with the next published `online`. A degradation that follows another
/// (`offline` then `limited`) is the same outage, only its worst state may change.
struct OutageTracker: Sendable, Equatable {
    /// The outage going on, or the one the last `online` ended; nil otherwise.
    private(set) var current: Outage?
    /// Outages since the daemon started: the next one gets the number after it.
    private var count: UInt64 = 0

    /// Takes in one published transition.
    mutating func note(_ event: StateEvent) {
        if event.state.isDegraded {
            if var ongoing = current, !ongoing.isOver {
                ongoing.worst = min(ongoing.worst, event.state)
                current = ongoing
            } else {
                count += 1
                current = Outage(id: count, since: event.since, worst: event.state)
            }
        } else if event.state == .online {
            if var ongoing = current, !ongoing.isOver {
                ongoing.endedAt = event.since
                current = ongoing
            } else {
                current = nil
            }
        }
    }
}
