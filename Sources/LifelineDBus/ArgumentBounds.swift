/// How much of a message `BusMessage.arguments(within:)` turns into values.
///
/// Everything the daemon reads over D-Bus is small: a property map of a dozen
/// entries, a state and its details, a list of job ids. The bounds are far
/// above that and far below what a bus lets a peer send, so a message past
/// them is refused (`LimitsExceeded`) before it costs memory, never read in
/// full and never a crash.
public struct ArgumentBounds: Sendable, Equatable {
    /// Values read, counting every element of every container.
    public var values: Int
    /// Containers inside containers (D-Bus itself allows 64).
    public var depth: Int
    /// Bytes of strings, object paths and signatures, all together.
    public var bytes: Int

    public init(values: Int, depth: Int, bytes: Int) {
        self.values = values
        self.depth = depth
        self.bytes = bytes
    }

    public static let standard = ArgumentBounds(values: 16_384, depth: 16, bytes: 1 << 20)
}

/// What is left of the bounds while one message is read.
struct Budget {
    private var values: Int
    private var bytes: Int
    private var depthLeft: Int
    private let bounds: ArgumentBounds

    init(_ bounds: ArgumentBounds) {
        self.bounds = bounds
        values = bounds.values
        bytes = bounds.bytes
        depthLeft = bounds.depth
    }

    mutating func spend(values count: Int, bytes size: Int) throws(BusError) {
        values -= count
        bytes -= size
        if values < 0 {
            throw BusError(name: BusError.limitsExceeded, "message holds more than \(bounds.values) values")
        }
        if bytes < 0 {
            throw BusError(name: BusError.limitsExceeded, "message holds more than \(bounds.bytes) bytes of arguments")
        }
    }

    /// Throws unless `count` more values fit: an array's length, checked before it is read.
    func afford(values count: Int) throws(BusError) {
        if count > values {
            throw BusError(name: BusError.limitsExceeded, "message holds more than \(bounds.values) values")
        }
    }

    mutating func descend() throws(BusError) {
        depthLeft -= 1
        if depthLeft < 0 {
            throw BusError(name: BusError.limitsExceeded, "message nests containers deeper than \(bounds.depth)")
        }
    }

    mutating func ascend() { depthLeft += 1 }
}
