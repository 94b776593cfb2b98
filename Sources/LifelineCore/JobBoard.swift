/// Commands that `lifeline run` holds until the network is back: what the D-Bus
/// service lists in `Jobs` and the toast counts ("2 commands waiting for the
/// network"). The board only keeps the list and its rules; the `run` process
/// that registered a job does the waiting and the running.
///
/// Each job belongs to the D-Bus connection that added it (its unique name,
/// ":1.42"): only that connection may change or remove it, and when it leaves
/// the bus its jobs go with it, so a `run` that was killed leaves nothing behind.

/// What a job is doing now.
public enum JobState: String, Sendable, Equatable, CaseIterable {
    /// Waiting for the network before its first run.
    case waiting
    /// The command runs.
    case running
    /// The command failed while the connection was lost; waiting for the network to run it again.
    case retrying

    /// The number D-Bus carries in `Jobs` (a(sst): id, command line, state), as
    /// NetworkManager numbers its states: 0 waiting, 1 running, 2 retrying.
    public var code: UInt64 {
        switch self {
        case .waiting: 0
        case .running: 1
        case .retrying: 2
        }
    }
}

public struct Job: Sendable, Equatable {
    public var id: String
    /// The command as the user typed it, for display only: control characters are
    /// shown, never passed on (a toast or a terminal would take them as instructions).
    public var commandLine: String
    public var state: JobState
    /// The D-Bus unique name of the connection that added the job.
    public var owner: String

    public init(id: String, commandLine: String, state: JobState, owner: String) {
        self.id = id
        self.commandLine = commandLine
        self.state = state
        self.owner = owner
    }

    /// Whether the job waits for the network (before its first run or to run again).
    public var isWaiting: Bool { state != .running }
}

/// Why the board refused a change; the text names what was wrong.
public struct JobRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable { case invalidArgument, unknownJob, notOwner, tooMany }
    public var reason: Reason
    public var message: String
    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }
    public var description: String { message }
}

/// What the user asked of the waiting jobs (the toast's buttons, `RetryJobs()`, `CancelJobs()`).
public enum JobAction: String, Sendable, Equatable {
    /// Run the waiting jobs now, without waiting for `online`.
    case retry
    /// Give up: each `run` ends with exit 130.
    case cancel
}

/// A request for the jobs' owners: which action, for which jobs.
public struct JobRequest: Sendable, Equatable {
    public var action: JobAction
    public var ids: [String]
    public init(action: JobAction, ids: [String]) {
        self.action = action
        self.ids = ids
    }
}

/// The list and its rules. A value type: the core bus keeps one under its lock.
public struct JobBoard: Sendable, Equatable {
    /// Per D-Bus connection: one `run` needs one; a peer that adds more is
    /// misbehaving and must not grow the daemon's memory or the toast.
    public static let maximumPerOwner = 16
    /// Over every connection.
    public static let maximumJobs = 256
    /// Longer command lines are cut (with "…"): the list is for people to read.
    public static let maximumCommandLength = 200

    public private(set) var jobs: [Job] = []
    private var counter: UInt64 = 0

    public init() {}

    /// How many jobs wait for the network.
    public var waitingCount: Int { jobs.count(where: \.isWaiting) }

    public func job(_ id: String) -> Job? { jobs.first { $0.id == id } }

    /// Adds a waiting job for `owner` and returns it.
    public mutating func add(commandLine: String, owner: String) throws(JobRefusal) -> Job {
        guard !owner.isEmpty else { throw JobRefusal(.invalidArgument, "a job needs an owner") }
        let shown = Self.displayable(commandLine)
        guard !shown.isEmpty else { throw JobRefusal(.invalidArgument, "the command line is empty") }
        guard jobs.count(where: { $0.owner == owner }) < Self.maximumPerOwner else {
            throw JobRefusal(.tooMany, "\(owner) already has \(Self.maximumPerOwner) jobs")
        }
        guard jobs.count < Self.maximumJobs else {
            throw JobRefusal(.tooMany, "the daemon already holds \(Self.maximumJobs) jobs")
        }
        counter += 1
        let job = Job(id: "\(counter)", commandLine: shown, state: .waiting, owner: owner)
        jobs.append(job)
        return job
    }

    /// Changes the state of `owner`'s job `id`; false when it already had that state.
    @discardableResult
    public mutating func setState(_ state: JobState, of id: String, by owner: String) throws(JobRefusal) -> Bool {
        let i = try index(of: id, ownedBy: owner)
        guard jobs[i].state != state else { return false }
        jobs[i].state = state
        return true
    }

    public mutating func remove(_ id: String, by owner: String) throws(JobRefusal) {
        jobs.remove(at: try index(of: id, ownedBy: owner))
    }

    /// Drops every job of a connection that left the bus; true when there were any.
    @discardableResult
    public mutating func removeAll(ownedBy owner: String) -> Bool {
        let before = jobs.count
        jobs.removeAll { $0.owner == owner }
        return jobs.count != before
    }

    /// Drops every job (the daemon lost the bus: every owner is gone with it).
    public mutating func clear() { jobs.removeAll() }

    /// The jobs an action concerns: retry runs the waiting ones; cancel ends them all.
    public func ids(for action: JobAction) -> [String] {
        switch action {
        case .retry: jobs.filter(\.isWaiting).map(\.id)
        case .cancel: jobs.map(\.id)
        }
    }

    private func index(of id: String, ownedBy owner: String) throws(JobRefusal) -> Int {
        guard let i = jobs.firstIndex(where: { $0.id == id }) else {
            throw JobRefusal(.unknownJob, "no job '\(TerminalText.visible(String(id.prefix(64))))'")
        }
        guard jobs[i].owner == owner else {
            throw JobRefusal(.notOwner, "job \(id) belongs to another connection")
        }
        return i
    }

    /// One line for people: control characters made visible, at most
    /// `maximumCommandLength` characters, surrounding spaces trimmed.
    static func displayable(_ commandLine: String) -> String {
        let visible = TerminalText.visible(String(commandLine.trimmingSpaces()))
        guard visible.count > maximumCommandLength else { return visible }
        return String(visible.prefix(maximumCommandLength - 1)) + "…"
    }
}

/// The sinks' door to the job board: the D-Bus service adds and changes jobs
/// for its callers, the toast asks for Retry or Cancel. Every change reaches
/// the sinks as an update carrying the list.
public struct JobControl: Sendable {
    let bus: Bus

    public var board: JobBoard { bus.jobBoard }

    public func add(commandLine: String, owner: String) throws(JobRefusal) -> Job {
        try bus.changeJobs { (b: inout JobBoard) throws(JobRefusal) in try b.add(commandLine: commandLine, owner: owner) }
    }

    public func setState(_ state: JobState, of id: String, by owner: String) throws(JobRefusal) {
        try bus.changeJobs { (b: inout JobBoard) throws(JobRefusal) in _ = try b.setState(state, of: id, by: owner) }
    }

    public func remove(_ id: String, by owner: String) throws(JobRefusal) {
        try bus.changeJobs { (b: inout JobBoard) throws(JobRefusal) in try b.remove(id, by: owner) }
    }

    public func removeAll(ownedBy owner: String) {
        _ = try? bus.changeJobs { (b: inout JobBoard) throws(JobRefusal) in b.removeAll(ownedBy: owner) }
    }

    public func clear() {
        try? bus.changeJobs { (b: inout JobBoard) throws(JobRefusal) in b.clear() }
    }

    /// Retry or Cancel, for whoever listens (the D-Bus service tells the owners).
    public func request(_ action: JobAction) { bus.requestJobs(action) }

    /// The requests, for the one who tells the owners; call once and iterate.
    public func requests() -> AsyncStream<JobRequest> { bus.jobRequests() }
}
