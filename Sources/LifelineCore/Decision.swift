/// The state decision as a pure function.
///
/// Input: the latest observation of each monitor (per role), in the order they
/// arrived (`stamp` grows with every observation). Output: one verdict, or nil
/// when nothing can be decided (nobody has spoken, or reachability is being
/// measured afresh).
///
/// Precedence:
/// 1. If any monitor speaks for the link and every link monitor says `offline`,
///    the state is `offline`: no route beats any probe result.
/// 2. Otherwise the freshest reachability observation decides (a probe that just
///    answered is worth more than a five-minute-old verdict). An `unknown`
///    reachability observation ("probed, not sure yet") decides nothing. While
///    a monitor that remeasures runs (the probe, whose answer is a consensus of
///    several endpoints), only its observations count here: a single source's
///    verdict (NetworkManager's one URI) makes the bus ask it to measure at
///    once, and its answer decides.
/// 3. With no reachability verdict: if a monitor that measures reachability on
///    demand is expected to answer (`awaitingReachability`: it has not spoken on
///    the current path yet), nothing is decided, so a stale or missing probe never
///    turns into `online`. Otherwise a usable link means `online` (or what the
///    link monitor itself reported).
///
/// A link observation of `unknown` says nothing about the link and is left out:
/// NetworkManager speaks for the link only to say it is down (its `State` of
/// DISCONNECTED or below), never to claim a route the kernel has not got.
/// The connection's name and kind come from the newest observation that names
/// a connection (NetworkManager knows "Home Wi-Fi" is wifi; netlink only guesses
/// from the interface's name), when it is about the same interface. A
/// captive-portal announcement comes from the link monitor, or from another
/// monitor that names the same interface in a link observation, even one of
/// `unknown` (NetworkManager's DHCP options).
public enum Decision {
    public struct Input: Sendable {
        public var observation: Observation
        /// Arrival order; larger is newer.
        public var stamp: UInt64
        /// From a monitor that measures reachability itself, across several
        /// endpoints, and measures again when asked (the probe).
        public var remeasured: Bool

        public init(_ observation: Observation, stamp: UInt64, remeasured: Bool = false) {
            self.observation = observation
            self.stamp = stamp
            self.remeasured = remeasured
        }
    }

    public static func decide<S: Sequence<Input>>(
        _ inputs: S, awaitingReachability: Bool = false, consensusRuns: Bool = false
    ) -> Verdict? {
        decide(slots: inputs.map(Optional.some), awaitingReachability: awaitingReachability, consensusRuns: consensusRuns)
    }

    /// `decide` over the bus's slots (nil: a monitor that has not spoken yet).
    /// The newest observation of each kind wins; "newest" is the bus's stamp.
    /// `consensusRuns`: a monitor that remeasures reachability runs, so only
    /// its reachability verdicts count; another monitor's (NetworkManager's
    /// one check URI, an exec script) are reasons to measure, which the bus
    /// asks for, never verdicts of their own.
    public static func decide(slots: [Input?], awaitingReachability: Bool = false, consensusRuns: Bool = false) -> Verdict? {
        var newestLink: Int?
        var newestUsableLink: Int?
        var newestReach: Int?
        var newestMetered: (value: Bool, stamp: UInt64)?
        var newestNamed: Int?
        var announced = Announced()
        func isNewest(_ stamp: UInt64, than best: Int?) -> Bool {
            guard let best, let bestStamp = slots[best]?.stamp else { return true }
            return stamp > bestStamp
        }
        for case let (i, input?) in slots.enumerated() {
            let seen = input.observation
            announced.note(input)
            if let m = seen.metered, newestMetered.map({ input.stamp > $0.stamp }) ?? true {
                newestMetered = (m, input.stamp)
            }
            if !seen.connection.isEmpty, isNewest(input.stamp, than: newestNamed) { newestNamed = i }
            guard seen.state != .unknown else { continue }
            switch seen.role {
            case .link:
                if isNewest(input.stamp, than: newestLink) { newestLink = i }
                if seen.state != .offline, isNewest(input.stamp, than: newestUsableLink) { newestUsableLink = i }
            case .reachability:
                if consensusRuns, !input.remeasured { continue }
                if isNewest(input.stamp, than: newestReach) { newestReach = i }
            }
        }
        func observation(_ index: Int?) -> Observation? { index.flatMap { slots[$0]?.observation } }

        let metered = newestMetered?.value
        if let link = observation(newestLink), newestUsableLink == nil {
            return verdict(from: link, state: .offline, metered: metered)
        }
        if let reach = observation(newestReach) {
            // A third-party monitor may not know the interface; the link monitor does.
            var v = verdict(from: reach, state: reach.state, metered: metered)
            if let link = observation(newestUsableLink) {
                if v.interface.isEmpty { v.interface = link.interface }
                if v.kind == .none { v.kind = link.kind }
                // The link under a VPN is the link monitor's to know, for the interface it names.
                if v.underneath.isEmpty, v.interface == link.interface {
                    v.underneath = link.underneath
                    v.underneathKind = link.underneathKind
                }
                // The announcement is the link monitor's; the probe adds the API's answer.
                if v.captivePortal == nil, v.interface == link.interface { v.captivePortal = announced.portal(for: link) }
            }
            return named(v, by: observation(newestNamed))
        }
        if newestUsableLink != nil, awaitingReachability { return nil }
        if let link = observation(newestUsableLink) {
            // netlink says `online` for "a usable route"; a third-party link monitor
            // may know more (an exec monitor reporting `portal`), so take its word.
            var v = verdict(from: link, state: link.state, metered: metered)
            if v.state != .offline { v.captivePortal = announced.portal(for: link) }
            return named(v, by: observation(newestNamed))
        }
        return nil
    }

    /// The verdict with the connection's name and kind from the monitor that
    /// knows them, if it speaks of the same interface (or of none).
    private static func named(_ v: Verdict, by named: Observation?) -> Verdict {
        guard let named, v.state != .offline else { return v }
        var v = v
        if v.interface.isEmpty { v.interface = named.interface }
        guard named.interface.isEmpty || named.interface == v.interface else { return v }
        v.connection = named.connection
        if named.kind != .none { v.kind = named.kind }
        return v
    }

    /// The route as the link monitors see it (`generation` left at 0): the
    /// interface of the newest usable link observation, nil when every link
    /// monitor says offline, unknown when no link monitor has spoken.
    public static func route<S: Sequence<Input>>(_ inputs: S) -> LinkPath {
        var newestLink: Input?
        var newestUsableLink: Input?
        var announced = Announced()
        for input in inputs {
            announced.note(input)
            guard input.observation.role == .link, input.observation.state != .unknown else { continue }
            if newestLink.map({ input.stamp > $0.stamp }) ?? true { newestLink = input }
            if input.observation.state != .offline, newestUsableLink.map({ input.stamp > $0.stamp }) ?? true {
                newestUsableLink = input
            }
        }
        var path = LinkPath(interface: newestUsableLink?.observation.interface, known: newestLink != nil)
        path.captivePortal = newestUsableLink.flatMap { announced.portal(for: $0.observation) }
        return path
    }

    private static func verdict(from o: Observation, state: ConnectivityState, metered: Bool?) -> Verdict {
        var v = Verdict(
            state: state,
            interface: state == .offline ? "" : o.interface,
            kind: state == .offline ? .none : o.kind,
            reason: o.reason,
            rttMs: o.rttMs,
            metered: metered ?? false
        ).with(diagnosis: o.diagnosis, families: o.families)
        if state != .offline {
            v.underneath = o.underneath
            v.underneathKind = o.underneathKind
            v.captivePortal = o.captivePortal
        }
        return v
    }
}
