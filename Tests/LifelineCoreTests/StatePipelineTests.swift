import LifelineCore
import Testing

/// The bus's decision as a value: every step is given its moment, so these
/// tests need no clock, no task and no sink.
@Suite struct StatePipelineTests {
    static let start: Int64 = 1_800_000_000_000_000

    func pipeline(down: Duration = .zero, up: Duration = .zero) -> StatePipeline {
        StatePipeline(debounce: DebounceSettings(down: down, up: up), current: .initial(at: Self.start, sequence: 7))
    }

    /// `seconds` into the run, on bus time.
    func at(_ seconds: Double) -> Moment { Moment(offset: .seconds(seconds)) }

    /// Wall-clock time `seconds` into the run, for a new state's `since`.
    func wall(_ seconds: Double) -> () -> Int64 {
        { Self.start + Duration.seconds(seconds).microseconds }
    }

    /// What `step` posted, in order, with `current` as the pipeline holds it right after.
    func posted(_ step: StatePipeline.Step, _ p: StatePipeline) -> [StatePipeline.Published] {
        switch step.posts {
        case .nothing: []
        case .current(let isTransition): [.init(event: p.current, outage: p.outage, isTransition: isTransition)]
        case .earlierThenCurrent(let earlier, let isTransition):
            [earlier, .init(event: p.current, outage: p.outage, isTransition: isTransition)]
        }
    }

    func link(_ state: ConnectivityState, _ interface: String) -> Observation {
        Observation(role: .link, state: state, interface: interface, reason: "link \(state)")
    }

    func reach(_ state: ConnectivityState, _ interface: String = "eth0", reason: String? = nil) -> Observation {
        Observation(role: .reachability, state: state, interface: interface, reason: reason ?? "probe \(state)")
    }

    @Test func aReleasedSlotsObservationIsDropped() {
        var p = pipeline()
        let ghost = p.attach(remeasuresReachability: false)
        let released = p.release(ghost, at: at(0), wallClock: wall(0))
        #expect(released.dropped == nil)
        #expect(released.posts == .nothing)

        let late = p.publish(link(.online, "wlan0"), from: ghost, at: at(1), wallClock: wall(1))
        #expect(late.dropped == .released)
        #expect(late.posts == .nothing && !late.pathChanged)
        #expect(p.current.state == .unknown)
        #expect(p.path == LinkPath())

        // The slot goes to the next monitor; the ghost's token does not.
        let heir = p.attach(remeasuresReachability: false)
        #expect(heir.index == ghost.index && heir.token != ghost.token)
        #expect(!p.owns(ghost) && p.owns(heir))
        #expect(p.publish(link(.online, "wlan0"), from: ghost, at: at(2), wallClock: wall(2)).dropped == .released)
        #expect(p.release(ghost, at: at(2), wallClock: wall(2)).dropped == .released)
        let taken = p.publish(link(.offline, ""), from: heir, at: at(3), wallClock: wall(3))
        #expect(taken.dropped == nil)
        #expect(taken.pathChanged)
        #expect(posted(taken, p).map(\.event.state) == [.offline])
        #expect(p.path.isOffline)
    }

    /// Releasing a slot forgets what its monitor said: its route no longer counts.
    @Test func releasingASlotForgetsItsRoute() {
        var p = pipeline()
        let nm = p.attach(remeasuresReachability: false)
        let netlink = p.attach(remeasuresReachability: false)
        _ = p.publish(link(.offline, ""), from: netlink, at: at(0), wallClock: wall(0))
        _ = p.publish(link(.online, "wlan0"), from: nm, at: at(1), wallClock: wall(1))
        #expect(p.path.interface == "wlan0")
        #expect(p.current.state == .online)

        let step = p.release(nm, at: at(2), wallClock: wall(2))
        #expect(step.pathChanged)
        #expect(p.path.isOffline)
        #expect(posted(step, p).map(\.event.state) == [.offline])
    }

    @Test func aVerdictMeasuredOnAnOlderPathIsDropped() {
        var p = pipeline()
        let netlink = p.attach(remeasuresReachability: false)
        let probe = p.attach(remeasuresReachability: true)
        #expect(p.publish(link(.online, "eth0"), from: netlink, at: at(0), wallClock: wall(0)).pathChanged)
        let before = p.path
        let moved = p.publish(link(.online, "wlan0"), from: netlink, at: at(1), wallClock: wall(1))
        #expect(moved.pathChanged)
        #expect(p.path.generation == before.generation + 1)

        // A probe that left by eth0 answers after the route moved to wlan0.
        let stale = p.publish(reach(.online, "eth0"), from: probe, measuredOn: before, at: at(2), wallClock: wall(2))
        #expect(stale.dropped == .measuredOnEarlierPath)
        #expect(stale.posts == .nothing)
        #expect(p.verdict == nil)
        #expect(p.current.state == .unknown)

        let fresh = p.publish(reach(.portal, "wlan0"), from: probe, measuredOn: p.path, at: at(3), wallClock: wall(3))
        #expect(fresh.dropped == nil)
        #expect(posted(fresh, p).map(\.event.state) == [.portal])
        #expect(p.current.interface == "wlan0")
    }

    /// The probe's verdict belongs to the path it was measured on; a monitor
    /// that does not measure again on demand keeps its word.
    @Test func aPathChangeForgetsTheRemeasuringSlotsVerdicts() {
        var p = pipeline(down: .seconds(2), up: .seconds(1))
        let netlink = p.attach(remeasuresReachability: false)
        let probe = p.attach(remeasuresReachability: true)
        _ = p.publish(link(.online, "eth0"), from: netlink, at: at(0), wallClock: wall(0))
        #expect(p.verdict == nil)  // a route alone is not online: the probe is awaited
        let online = p.publish(reach(.online), from: probe, measuredOn: p.path, at: at(1), wallClock: wall(1))
        #expect(posted(online, p).map(\.event.state) == [.online])

        let moved = p.publish(link(.online, "wlan0"), from: netlink, at: at(5), wallClock: wall(5))
        #expect(moved.pathChanged)
        #expect(p.verdict == nil)
        #expect(moved.posts == .nothing)
        #expect(moved.deadline == nil)
        #expect(p.current.state == .online && p.current.interface == "eth0")  // the published state stands

        // With NetworkManager's own verdict beside the probe's, only the probe's is
        // forgotten, and NetworkManager's does not stand in for it: while the probe
        // runs, a single source's verdict asks it to measure and decides nothing.
        var q = pipeline()
        let link2 = q.attach(remeasuresReachability: false)
        let nm = q.attach(remeasuresReachability: false)
        let probe2 = q.attach(remeasuresReachability: true)
        _ = q.publish(link(.online, "eth0"), from: link2, at: at(0), wallClock: wall(0))
        let said = q.publish(reach(.limited, "eth0", reason: "NetworkManager: limited"), from: nm, at: at(1), wallClock: wall(1))
        #expect(said.wantsCheck)
        #expect(q.verdict == nil)
        _ = q.publish(reach(.online), from: probe2, measuredOn: q.path, at: at(2), wallClock: wall(2))
        #expect(q.verdict?.state == .online)
        _ = q.publish(link(.online, "wlan0"), from: link2, at: at(3), wallClock: wall(3))
        #expect(q.verdict == nil)
    }

    @Test func outageIDsOverDegradedDegradedOnline() {
        var p = pipeline()
        let m = p.attach(remeasuresReachability: false)
        func say(_ state: ConnectivityState, at t: Double, reason: String? = nil) -> StatePipeline.Published? {
            let step = p.publish(reach(state, reason: reason), from: m, at: at(t), wallClock: wall(t))
            let posts = posted(step, p)
            #expect(posts.count <= 1)
            return posts.first
        }
        let online = say(.online, at: 0)
        #expect(online?.isTransition == true && online?.outage == nil)

        let offline = say(.offline, at: 1)
        #expect(offline?.outage == Outage(id: 1, since: Self.start + 1_000_000, worst: .offline))
        let limited = say(.limited, at: 2)
        #expect(limited?.outage == Outage(id: 1, since: Self.start + 1_000_000, worst: .offline))  // the same outage
        let back = say(.online, at: 3)
        #expect(back?.outage == Outage(id: 1, since: Self.start + 1_000_000, worst: .offline, endedAt: Self.start + 3_000_000))
        // New attributes of the `online` that ended it still carry it.
        let faster = say(.online, at: 4, reason: "probe answered in 3 ms")
        #expect(faster?.isTransition == false && faster?.outage?.id == 1)

        let portal = say(.portal, at: 5)
        #expect(portal?.outage == Outage(id: 2, since: Self.start + 5_000_000, worst: .portal))
        #expect(p.outage?.id == 2)
        #expect(p.current.sequence == 7 + 5)
    }

    /// A transition's `since` is when the state began, not when its window ran out.
    @Test func aDebouncedTransitionIsDatedFromWhenItBegan() {
        var p = pipeline(down: .seconds(2), up: .seconds(1))
        let m = p.attach(remeasuresReachability: false)
        _ = p.publish(reach(.online), from: m, at: at(0), wallClock: wall(0))
        let lost = p.publish(reach(.offline), from: m, at: at(10), wallClock: wall(10))
        #expect(lost.posts == .nothing)
        #expect(lost.deadline == at(12))
        #expect(p.tick(at: at(11.5), wallClock: wall(11.5)).posts == .nothing)

        let due = p.tick(at: at(12), wallClock: wall(12))
        #expect(posted(due, p).map(\.event.state) == [.offline])
        #expect(posted(due, p).first?.event.since == Self.start + 10_000_000)
        #expect(posted(due, p).first?.event.previous == .online)
        #expect(due.deadline == nil)
    }

    /// A timer that fires late loses nothing: what fell due is posted first,
    /// then what the late observation says, each as it was then.
    @Test func whatFellDueIsPostedBeforeTheObservationThatCameLate() {
        var p = pipeline(down: .seconds(2), up: .seconds(1))
        let m = p.attach(remeasuresReachability: false)
        _ = p.publish(reach(.online), from: m, at: at(0), wallClock: wall(0))
        _ = p.publish(reach(.limited, reason: "timed out"), from: m, at: at(1), wallClock: wall(1))
        let step = p.publish(reach(.limited, reason: "timed out again"), from: m, at: at(4), wallClock: wall(4))
        #expect(posted(step, p).map(\.isTransition) == [true, false])
        #expect(posted(step, p).map(\.event.reason) == ["timed out", "timed out again"])
        #expect(posted(step, p).map(\.event.sequence) == [9, 9])
    }

    /// "Check now": the verdict waiting for its window is published at once;
    /// with nothing waiting, nothing is.
    @Test func flushPublishesOnlyTheVerdictDecidedNow() {
        var p = pipeline(down: .seconds(2), up: .seconds(1))
        let m = p.attach(remeasuresReachability: false)
        #expect(p.flush(at: at(0), wallClock: wall(0)).posts == .nothing)
        _ = p.publish(reach(.online), from: m, at: at(0), wallClock: wall(0))
        _ = p.publish(reach(.portal), from: m, at: at(1), wallClock: wall(1))
        let flushed = p.flush(at: at(1.5), wallClock: wall(1.5))
        #expect(posted(flushed, p).map(\.event.state) == [.portal])
        #expect(flushed.deadline == nil)
        #expect(p.flush(at: at(1.6), wallClock: wall(1.6)).posts == .nothing)
    }
}
