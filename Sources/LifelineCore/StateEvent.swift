/// A published state with every field other programs read. This is what the log, the
/// state file, D-Bus and every other surface show.
public struct StateEvent: Sendable, Equatable, Codable {
    public var state: ConnectivityState
    public var previous: ConnectivityState
    /// Microseconds since the Unix epoch at which `state` began.
    public var since: Int64
    public var interface: String
    public var kind: InterfaceKind
    public var reason: String
    /// Last probe round trip in milliseconds, or -1.
    public var rttMs: Double
    public var metered: Bool
    /// +1 per published transition; 0 is the start-up `unknown`.
    public var sequence: UInt64
    /// The network connection's name ("Home Wi-Fi"), "" when unknown.
    public var connection: String = ""
    /// The layer that failed first; empty when online.
    public var diagnosis: Diagnosis = .none
    /// The state of each family that has a default route.
    public var families = FamilyStates()
    /// Through a VPN: the interface that carries the tunnel ("wlan0"), "" otherwise.
    public var underneath: String = ""
    /// The kind of `underneath`.
    public var underneathKind: InterfaceKind = .none
    /// The network's captive-portal API on `interface`, where one was
    /// announced, with the keys its last answer gave.
    public var captivePortal: CaptivePortal?
    /// How well the connection works, while `online` and known: an attribute
    /// that changes in place, never a transition.
    public var quality: Quality?

    public init(
        state: ConnectivityState, previous: ConnectivityState, since: Int64, interface: String = "",
        kind: InterfaceKind = .none, reason: String = "", rttMs: Double = -1, metered: Bool = false,
        sequence: UInt64,
        connection: String = ""
    ) {
        self.state = state
        self.previous = previous
        self.since = since
        self.interface = interface
        self.kind = kind
        self.reason = reason
        self.rttMs = rttMs
        self.metered = metered
        self.sequence = sequence
        self.connection = connection
    }

    /// The field names as every surface writes them (JSON, D-Bus details), in order.
    public enum CodingKeys: String, CodingKey, CaseIterable {
        case state, previous, since, interface, kind, reason
        case rttMs = "rtt_ms"
        case metered, sequence
        case connection
        case diagnosis, families
        // `underneath` and `underneath_kind` are written only through a VPN,
        // and `captive_portal` only where a network announced one, and `quality`
        // and `quality_details` only while known, after these: they are no field
        // every event has.
    }

    /// The start-up `unknown`. `sequence` is the last one a previous run of the
    /// daemon published, so numbers keep growing across restarts.
    public static func initial(at since: Int64, sequence: UInt64 = 0) -> StateEvent {
        StateEvent(state: .unknown, previous: .unknown, since: since, reason: "starting", sequence: sequence)
    }
}

/// An outage: from a published degradation to the next published `online`.
public struct Outage: Sendable, Equatable {
    /// Counts outages since the daemon started; sinks use it to tell a new outage from an update.
    public var id: UInt64
    /// When the degraded state began, µs since the epoch.
    public var since: Int64
    /// The worst state seen during the outage.
    public var worst: ConnectivityState
    /// When `online` came back (µs since the epoch); nil while the outage lasts.
    public var endedAt: Int64?

    public init(id: UInt64, since: Int64, worst: ConnectivityState, endedAt: Int64? = nil) {
        self.id = id
        self.since = since
        self.worst = worst
        self.endedAt = endedAt
    }

    public var isOver: Bool { endedAt != nil }
}

/// What a sink receives.
public struct Update: Sendable, Equatable {
    public var event: StateEvent
    /// True when `event` is a new published transition; false for attribute-only changes
    /// and the start-up state.
    public var isTransition: Bool
    /// The outage this state belongs to: ongoing, or the one that just ended (on
    /// the `online` that ended it and its attribute updates). Nil otherwise.
    public var outage: Outage?
    /// Alerts are muted until this time (µs since the epoch); 0 when not muted.
    public var mutedUntil: Int64
    /// Whether a desktop notification server is on the session bus, as the
    /// notification sink sees it; nil while no sink has said (none configured).
    /// The tmux sink falls back to `display-message` when it is false.
    public var notificationServerPresent: Bool?
    /// Alerts wait: the machine sleeps, has just resumed, or the login session
    /// is not in front. Surfaces that only show the state ignore it.
    public var alertsHeld = false
    /// The commands `lifeline run` holds for the network, for the toast and `Jobs`.
    public var jobs: [Job] = []
    /// The machine's sleeps, for the event log to write down.
    public var sleep = SleepRecord()
    /// When the daemon began to stop cleanly (µs since the epoch); nil while it runs.
    /// The log writes it down, so the time it was not running is known.
    public var stoppingAt: Int64?

    public init(
        event: StateEvent, isTransition: Bool, outage: Outage? = nil, mutedUntil: Int64 = 0,
        notificationServerPresent: Bool? = nil
    ) {
        self.event = event
        self.isTransition = isTransition
        self.outage = outage
        self.mutedUntil = mutedUntil
        self.notificationServerPresent = notificationServerPresent
    }

    public func isMuted(at now: Int64) -> Bool { mutedUntil > now }

    /// Replaced in place by a newer update while both wait in a coalescing
    /// mailbox: still a transition if either was. In place, because the bus
    /// posts on every change, and a merged copy cost a copy of every field.
    mutating func replace(with newer: Update) {
        let wasTransition = isTransition
        self = newer
        if wasTransition { isTransition = true }
    }
}
