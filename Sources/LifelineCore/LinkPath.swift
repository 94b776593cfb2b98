/// The path packets take to the internet, as the link monitors see it: the
/// interface of the usable default route. A reachability verdict belongs to the
/// path it was measured on; `generation` tells paths apart, so a probe that
/// started before the route went away and came back cannot speak for the new one.
public struct LinkPath: Sendable, Equatable {
    /// The primary interface; nil when there is no usable default route.
    public var interface: String?
    /// False until a link monitor has spoken (none may be configured): then the
    /// path is unknown, and a probe goes wherever the kernel routes it.
    public var known: Bool
    /// Grows by one whenever `known`, usability or the interface changes.
    public var generation: UInt64
    /// The captive-portal API the network announced on `interface`, if any
    /// (what the probe asks). It changes without a new `generation`: the
    /// route is the same, and so are the verdicts measured on it.
    public var captivePortal: CaptivePortal?

    public init(interface: String? = nil, known: Bool = false, generation: UInt64 = 0) {
        self.interface = interface
        self.known = known
        self.generation = generation
    }

    /// Whether there is no usable default route, as far as anyone knows.
    public var isOffline: Bool { known && interface == nil }

    func sameRoute(as other: LinkPath) -> Bool {
        known == other.known && interface == other.interface
    }
}
