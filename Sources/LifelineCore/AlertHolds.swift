/// The alert holds of every monitor slot that reports them (the logind
/// monitor), and what they add up to: whether alerts are held now, and the
/// machine's sleeps. One hold per slot, so a monitor that stops takes its hold
/// with it.
struct AlertHolds {
    private var holds: [Int: AlertHold] = [:]
    /// Whether alerts were held when last refreshed: what every update carries.
    private(set) var held = false
    private(set) var sleep = SleepRecord()

    /// What a refresh changed: either means every sink needs a fresh update.
    struct Change {
        var held = false
        var sleep = false
        var any: Bool { held || sleep }
    }

    mutating func change(slot: Int, at now: Moment, _ change: (inout AlertHold, Moment) -> Void) {
        var hold = holds[slot] ?? AlertHold()
        change(&hold, now)
        holds[slot] = hold
    }

    mutating func remove(slot: Int) {
        holds[slot] = nil
    }

    /// Adds the holds up again at `now`. The sleep record changes even when
    /// alerts were already held (a locked session), so the log still writes
    /// the sleep down.
    mutating func refresh(at now: Moment, wallClock: () -> Int64) -> Change {
        var change = Change()
        let nowHeld = holds.values.contains { $0.isHeld(at: now) }
        change.sleep = sleep.note(sleeping: holds.values.contains { $0.sleeping }, at: wallClock())
        change.held = nowHeld != held
        held = nowHeld
        return change
    }

    /// The earliest moment a hold lifts by itself (a resume grace running
    /// out): no observation comes with it, so a timer must refresh then.
    func nextLift(after now: Moment) -> Moment? {
        holds.values.compactMap { $0.lifts(after: now) }.min()
    }
}
