import LifelineCore
import LifelineFormats

/// What was going on during a stretch of time, as the event log tells it.
public enum Activity: Sendable, Equatable {
    /// Online.
    case up
    /// Offline, limited or portal.
    case down(ConnectivityState)
    /// The machine slept: neither up nor down.
    case asleep
    /// The daemon had stopped cleanly and not started again: neither up nor down.
    case notRunning
    /// The log says nothing of the state (it begins with a mark): neither up nor down.
    case unknown

    public var isDown: Bool {
        if case .down = self { return true }
        return false
    }
}

/// One stretch of the timeline: from `start` up to `end` (µs since the epoch).
public struct Segment: Sendable, Equatable {
    public var start: Int64
    public var end: Int64
    public var activity: Activity
    /// For a stretch down: the layer that failed and the monitor's sentence.
    public var diagnosis: Diagnosis
    public var reason: String
}

/// The log read into one unbroken run of segments, from its first line up to
/// now. A transition sets the state; a sleep, a wake and a stop lay time over
/// it in which nobody was looking. Without a stop line (the daemon was killed,
/// the machine lost power) nothing says when the daemon went away: the state
/// it last logged counts until the next one starts, as `history` always has.
/// Times that go back (a clock set back, an edited file) count as no time.
public struct Timeline: Sendable {
    public private(set) var segments: [Segment] = []
    /// The time of the log's first line; nil for an empty log.
    public private(set) var recordStart: Int64?
    public let now: Int64

    public init(_ contents: EventLog.Contents, now: Int64) {
        self.init(events: contents.events, marks: contents.marks, now: now)
    }

    public init(events: [StateEvent], marks: [(before: Int, mark: LogMark)], now: Int64) {
        self.now = now
        var reader = Reader()
        var nextMark = 0
        for (index, event) in events.enumerated() {
            while nextMark < marks.count, marks[nextMark].before <= index {
                reader.read(marks[nextMark].mark, into: &segments)
                nextMark += 1
            }
            reader.read(event, into: &segments)
        }
        for rest in marks[nextMark...] { reader.read(rest.mark, into: &segments) }
        recordStart = reader.first
        if reader.cursor != nil { reader.advance(to: now, into: &segments) }
    }

    /// The state of the reading: where it is, what the log last said.
    private struct Reader {
        var first: Int64?
        var cursor: Int64?
        var state: StateEvent?
        var asleep = false
        var stopped = false

        var activity: Activity {
            if stopped { return .notRunning }
            if asleep { return .asleep }
            guard let state else { return .unknown }
            if state.state == .online { return .up }
            if state.state.isDegraded { return .down(state.state) }
            return .unknown
        }

        mutating func advance(to time: Int64, into segments: inout [Segment]) {
            guard let from = cursor else {
                cursor = time
                first = time
                return
            }
            let to = max(time, from)
            cursor = to
            let activity = self.activity
            // A state that lasted no time still happened: an outage that began and
            // ended in the same instant is listed, as `history` lists it.
            guard to > from || activity.isDown else { return }
            let diagnosis = activity.isDown ? state?.diagnosis ?? .none : .none
            let reason = activity.isDown ? state?.reason ?? "" : ""
            if var last = segments.last, last.end == from, last.activity == activity, last.diagnosis == diagnosis,
               last.reason == reason, to > from {
                last.end = to
                segments[segments.count - 1] = last
            } else {
                segments.append(Segment(start: from, end: to, activity: activity, diagnosis: diagnosis, reason: reason))
            }
        }

        mutating func read(_ event: StateEvent, into segments: inout [Segment]) {
            advance(to: event.since, into: &segments)
            // A transition proves a daemon runs; one from `unknown` is a daemon that
            // (re)started, after any sleep it missed the end of.
            stopped = false
            if event.previous == .unknown { asleep = false }
            state = event
        }

        mutating func read(_ mark: LogMark, into segments: inout [Segment]) {
            switch mark {
            case .sleep(let at):
                advance(to: at, into: &segments)
                asleep = true
            case .wake(let at, let asleepSince):
                if !asleep {
                    // Its sleep line is missing: the wake says when it began.
                    advance(to: asleepSince, into: &segments)
                    asleep = true
                }
                advance(to: at, into: &segments)
                asleep = false
            case .stop(let at):
                advance(to: at, into: &segments)
                stopped = true
                asleep = false
            }
        }
    }
}
