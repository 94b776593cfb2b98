import LifelineCore

/// How long a probe waits for its connection (name lookup and TCP handshake)
/// while it checks whether an answer it had a moment ago is gone.
///
/// The kernel sends a SYN, and a second one `synRetry` (1 s, its initial
/// retransmission timeout) later when nothing came back. On a working path a
/// connection comes up within a few of its usual connect times even when one
/// of those two SYNs (or its answer) is lost. So a connection still not up
/// `synRetry` + max(`slack`, `factor` × the slowest recent connect) after it
/// started has lost both: the round fails then, not at the whole timeout, and
/// the probe confirms at once with a fresh connection under the same bound.
/// On a lossy but working link both SYNs of two connections in a row must be
/// lost for a false outage (one in 625 rounds at 20 % loss one way).
///
/// Only the connection is bounded: a server that accepted it but answers
/// slowly still gets the whole timeout. Nothing is bounded until the check
/// server has answered on this path (its usual time is unknown), nor once an
/// outage is published (a probe waiting longer then retransmits its SYN into
/// the healed path and sees the recovery sooner).
package struct ConnectBound: Sendable {
    package init() {}

    package static let synRetry = Duration.seconds(1)
    /// A SYN retransmission leaves a little after its 1 s timer (timer slack,
    /// scheduling); a quarter second covers it, as Happy Eyeballs waits 250 ms.
    package static let slack = Duration.milliseconds(250)
    package static let factor = 3
    /// Recent successful connects remembered per family.
    package static let kept = 4

    private var path: UInt64?
    private var recent: [String: [Duration]] = [:]

    /// Remembers how long a successful connect took on `path` over `family`.
    /// A connect that took `synRetry` or longer had its SYN retransmitted (or
    /// its lookup repeated): it tells of a loss, not of the server's usual
    /// time, and is not remembered. The first answer after an outage is one.
    package mutating func record(_ connect: Duration, family: String, path: UInt64) {
        if path != self.path {
            self.path = path
            recent = [:]
        }
        guard connect < Self.synRetry else { return }
        var times = recent[family] ?? []
        times.append(max(.zero, connect))
        if times.count > Self.kept { times.removeFirst(times.count - Self.kept) }
        recent[family] = times
    }

    /// The slowest recent connect over `family` on `path`; nil while none is known.
    package func usual(family: String, path: UInt64) -> Duration? {
        guard path == self.path else { return nil }
        return recent[family]?.max()
    }

    /// The connect bound for a probe over `family` on `path`: `timeout` when no
    /// answer was seen on this path yet, never more than `timeout`.
    package func bound(family: String, path: UInt64, timeout: Duration) -> Duration {
        guard path == self.path, let slowest = recent[family]?.max() else { return timeout }
        return min(timeout, Self.synRetry + max(Self.slack, slowest * Self.factor))
    }
}
