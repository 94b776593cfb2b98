/// From observations to the published state, as a value: the monitors' slots,
/// the latest observation of each, the path they describe, the decision
/// (`Decision`), the debounce (`Debouncer`), the state published last and the
/// outage it belongs to.
///
/// It reads no clock and starts nothing: every step takes the moment it runs at
/// (bus time for the debounce windows, wall-clock time for a new state's
/// `since`) and returns what happened, for the bus to act on under its lock:
/// whether the path changed, the updates to post, and when to tick next.
public struct StatePipeline: Sendable {
    /// One monitor's place: its slot, and which ownership of the slot it stands
    /// for. A monitor that did not stop when its slot was released (stuck in a C
    /// call, or mid-batch on a thread of its own) may still publish; the token
    /// tells its words from those of the slot's next owner.
    public struct Slot: Sendable, Equatable {
        public let index: Int
        public let token: UInt64
    }

    /// Why an observation was not taken.
    public enum Drop: Sendable, Equatable {
        /// Its monitor's slot was released: the monitor speaks for nothing.
        case released
        /// A reachability verdict measured on a path that has changed since:
        /// it speaks for a route that is gone.
        case measuredOnEarlierPath
    }

    /// A state to post to every sink, as it was at that point of a step.
    public struct Published: Sendable, Equatable {
        public var event: StateEvent
        public var outage: Outage?
        /// A new state or interface, rather than new attributes of the same one.
        public var isTransition: Bool

        public init(event: StateEvent, outage: Outage?, isTransition: Bool) {
            self.event = event
            self.outage = outage
            self.isTransition = isTransition
        }
    }

    /// What one step posts. Usually nothing or `current`; two states only when
    /// a window fell due at the moment a new verdict came (a timer that fired
    /// late): then what fell due is posted first, as it was then. `current` is
    /// read from the pipeline, not copied into the step: the bus takes a step for
    /// every observation of every monitor, and copies of the state (strings and
    /// all) cost more than deciding it.
    public enum Posts: Sendable, Equatable {
        case nothing
        /// `current`, as a new state or as new attributes of the same one.
        case current(isTransition: Bool)
        /// `earlier`, then `current`.
        indirect case earlierThenCurrent(Published, isTransition: Bool)
    }

    /// What one step did.
    public struct Step: Sendable {
        /// Why the observation was dropped; nil when it was taken.
        public var dropped: Drop?
        /// The path changed: whoever measures on it must be told.
        public var pathChanged = false
        /// A single source gave a reachability verdict while a monitor that
        /// remeasures runs: that monitor must measure now, and its answer decides.
        public var wantsCheck = false
        public var posts = Posts.nothing
        /// When the pipeline must tick next, if anything waits for its window.
        public var deadline: Moment?
    }

    private var debouncer: Debouncer<Moment>
    /// The latest observation per slot and role (index slot * 2 + role).
    private var inputs: [Decision.Input?] = []
    /// Per slot: the monitor measures reachability on demand (the probe), so
    /// its verdict is dropped when the path changes and awaited after.
    private var remeasures: [Bool] = []
    private var freeSlots: [Int] = []
    /// Per slot: the token of the monitor that owns it, 0 when free.
    private var owners: [UInt64] = []
    private var lastToken: UInt64 = 0
    /// Arrival order of observations.
    private var stamp: UInt64 = 0
    private var outages = OutageTracker()

    /// Which interface carries the default route, as the link observations say.
    public private(set) var path = LinkPath()
    /// What the observations decide now; nil when nothing can be decided.
    public private(set) var verdict: Verdict?
    /// The state published last.
    public private(set) var current: StateEvent
    /// The outage `current` belongs to: ongoing, or the one its `online` ended.
    public var outage: Outage? { outages.current }

    /// `current`: the state to start from (the start-up `unknown`, numbered
    /// after the last sequence an earlier run published).
    public init(debounce: DebounceSettings, current: StateEvent) {
        debouncer = Debouncer(down: debounce.down, up: debounce.up)
        self.current = current
    }

    public var debounce: DebounceSettings {
        get { DebounceSettings(down: debouncer.down, up: debouncer.up) }
        set {
            debouncer.down = newValue.down
            debouncer.up = newValue.up
        }
    }

    /// When the pipeline must tick next, if anything waits for its window.
    public var deadline: Moment? { debouncer.deadline }

    // MARK: Slots

    /// A slot for a new monitor. `remeasuresReachability`: the monitor judges
    /// reachability and answers check requests (the probe), so its verdict is
    /// tied to the path it was measured on.
    public mutating func attach(remeasuresReachability: Bool) -> Slot {
        let index: Int
        if let free = freeSlots.popLast() {
            index = free
        } else {
            inputs.append(contentsOf: [nil, nil])
            remeasures.append(false)
            owners.append(0)
            index = remeasures.count - 1
        }
        lastToken += 1
        owners[index] = lastToken
        remeasures[index] = remeasuresReachability
        return Slot(index: index, token: lastToken)
    }

    /// Whether `slot` still speaks for its monitor (it was not released).
    public func owns(_ slot: Slot) -> Bool {
        owners[slot.index] == slot.token
    }

    /// Forgets what the slot's monitor said and frees the slot for the next one.
    public mutating func release(_ slot: Slot, at now: Moment, wallClock: () -> Int64) -> Step {
        guard owns(slot) else { return Step(dropped: .released) }
        owners[slot.index] = 0
        inputs[slot.index * 2] = nil
        inputs[slot.index * 2 + 1] = nil
        remeasures[slot.index] = false
        freeSlots.append(slot.index)
        var step = Step()
        step.pathChanged = updatePath()
        decide(at: now, wallClock: wallClock, into: &step)
        return step
    }

    // MARK: Steps

    /// Takes an observation of `slot`'s monitor. `measuredOn`: the path a
    /// reachability verdict was measured on.
    public mutating func publish(
        _ observation: Observation, from slot: Slot, measuredOn: LinkPath? = nil,
        at now: Moment, wallClock: () -> Int64
    ) -> Step {
        guard owns(slot) else { return Step(dropped: .released) }
        if let measuredOn, measuredOn.generation != path.generation {
            return Step(dropped: .measuredOnEarlierPath)
        }
        stamp &+= 1
        inputs[slot.index * 2 + observation.role.rawValue] =
            Decision.Input(observation, stamp: stamp, remeasured: remeasures[slot.index])
        var step = Step()
        step.wantsCheck = observation.role == .reachability && observation.state != .unknown
            && !remeasures[slot.index] && consensusRuns
        if observation.role == .link { step.pathChanged = updatePath() }
        decide(at: now, wallClock: wallClock, into: &step)
        return step
    }

    /// Publishes what has held for its window by `now`.
    public mutating func tick(at now: Moment, wallClock: () -> Int64) -> Step {
        var step = Step()
        apply(debouncer.tick(at: now), at: now, wallClock: wallClock, to: &step)
        step.deadline = debouncer.deadline
        return step
    }

    /// Publishes the verdict decided now at once, window or not, if it is the one
    /// waiting: for a check the user asked for, where waiting would only look broken.
    public mutating func flush(at now: Moment, wallClock: () -> Int64) -> Step {
        var step = Step()
        if let verdict, debouncer.pending?.key == verdict.key {
            apply(debouncer.flush(at: now), at: now, wallClock: wallClock, to: &step)
        }
        step.deadline = debouncer.deadline
        return step
    }

    // MARK: Path, decision, debounce

    /// Recomputes the path from the link observations; true when it changed.
    /// Then every verdict measured on the old one is forgotten: reachability is
    /// unknown until measured again.
    private mutating func updatePath() -> Bool {
        let route = Decision.route(inputs.lazy.compactMap { $0 })
        guard !route.sameRoute(as: path) else {
            // A new announcement on the same route: whoever asks the API must hear of it.
            guard route.captivePortal != path.captivePortal else { return false }
            path.captivePortal = route.captivePortal
            return true
        }
        path = LinkPath(interface: route.interface, known: route.known, generation: path.generation + 1)
        path.captivePortal = route.captivePortal
        for slot in remeasures.indices where remeasures[slot] {
            inputs[slot * 2 + ObservationRole.reachability.rawValue] = nil
        }
        return true
    }

    /// Whether a monitor that measures reachability on demand runs: then its
    /// verdicts, and only its, decide reachability.
    private var consensusRuns: Bool { remeasures.contains(true) }

    /// Whether a monitor that measures reachability on demand has yet to speak on this path.
    private var awaitingReachability: Bool {
        guard consensusRuns else { return false }
        return !inputs.contains {
            $0?.remeasured == true && $0?.observation.role == .reachability && $0?.observation.state != .unknown
        }
    }

    private mutating func decide(at now: Moment, wallClock: () -> Int64, into step: inout Step) {
        if let verdict = Decision.decide(slots: inputs, awaitingReachability: awaitingReachability,
                                         consensusRuns: consensusRuns) {
            self.verdict = verdict
            for output in debouncer.observe(verdict, at: now) {
                apply(output, at: now, wallClock: wallClock, to: &step)
            }
        } else {
            verdict = nil
            for output in debouncer.hold(at: now) {
                apply(output, at: now, wallClock: wallClock, to: &step)
            }
        }
        step.deadline = debouncer.deadline
    }

    private mutating func apply(
        _ output: Debouncer<Moment>.Output, at now: Moment, wallClock: () -> Int64, to step: inout Step
    ) {
        if case .none = output { return }
        // The second post of a step: the first goes out as it was.
        var earlier: Published?
        if case .current(let wasTransition) = step.posts {
            earlier = Published(event: current, outage: outage, isTransition: wasTransition)
        }
        let isTransition: Bool
        switch output {
        case .none:
            return
        case .attributes(let v):
            current.kind = v.kind
            current.reason = v.reason
            current.rttMs = v.rttMs ?? -1
            current.metered = v.metered
            current.connection = v.connection
            current.diagnosis = v.diagnosis
            current.families = v.families
            current.underneath = v.underneath
            current.underneathKind = v.underneathKind
            current.captivePortal = v.captivePortal
            isTransition = false
        case .transition(let v, let heldSince):
            let heldFor = heldSince.duration(to: now)
            let since = wallClock() - heldFor.microseconds
            current = StateEvent(
                state: v.state, previous: current.state, since: since, interface: v.interface,
                kind: v.kind, reason: v.reason, rttMs: v.rttMs ?? -1, metered: v.metered,
                sequence: current.sequence + 1,
                connection: v.connection
            )
            current.diagnosis = v.diagnosis
            current.families = v.families
            current.underneath = v.underneath
            current.underneathKind = v.underneathKind
            current.captivePortal = v.captivePortal
            outages.note(current)
            isTransition = true
        }
        step.posts = earlier.map { .earlierThenCurrent($0, isTransition: isTransition) } ?? .current(isTransition: isTransition)
    }
}
