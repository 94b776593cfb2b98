import LifelineCore

/// The jobs part of `org.lifeline.Lifeline1`: how `lifeline run` registers the
/// command it holds for the network, and how it hears Retry and Cancel.
///
/// - property `Jobs` a(sst): (id, command line, state) of every job, with `PropertiesChanged`;
///   the state is a number: 0 waiting, 1 running, 2 retrying;
/// - `AddJob(s command_line) → s id`: a job for the calling connection, `waiting`;
/// - `SetJobState(s id, s state)`: `waiting`, `running` or `retrying`;
/// - `RemoveJob(s id)`: done with it;
/// - `RetryJobs()` / `CancelJobs()`: what the toast's buttons do;
/// - signal `JobsRequested(s action, as ids)`: `retry` or `cancel`, for the jobs named.
///
/// A connection can change and remove only its own jobs, and its jobs go when
/// it leaves the bus.
extension Lifeline1 {
    public static let jobsSignature = (name: "Jobs", signature: "a(sst)")
    public static let jobsRequestedSignal = "JobsRequested"

    /// The method handlers of the jobs part.
    public struct JobHandlers: Sendable {
        public var addJob: @Sendable (MethodCall) -> Void
        public var setJobState: @Sendable (MethodCall) -> Void
        public var removeJob: @Sendable (MethodCall) -> Void
        public var retryJobs: @Sendable (MethodCall) -> Void
        public var cancelJobs: @Sendable (MethodCall) -> Void

        public init(
            addJob: @escaping @Sendable (MethodCall) -> Void, setJobState: @escaping @Sendable (MethodCall) -> Void,
            removeJob: @escaping @Sendable (MethodCall) -> Void, retryJobs: @escaping @Sendable (MethodCall) -> Void,
            cancelJobs: @escaping @Sendable (MethodCall) -> Void
        ) {
            self.addJob = addJob
            self.setJobState = setJobState
            self.removeJob = removeJob
            self.retryJobs = retryJobs
            self.cancelJobs = cancelJobs
        }

        /// For the interface description alone: every call is left unanswered
        /// (and so answered `Failed`).
        public static let unanswered = JobHandlers(addJob: { _ in }, setJobState: { _ in }, removeJob: { _ in },
                                                   retryJobs: { _ in }, cancelJobs: { _ in })
    }

    static func jobMethods(_ h: JobHandlers) -> [BusInterface.Method] {
        [
            .init("AddJob", inputs: [.init("command_line", "s")], outputs: [.init("id", "s")], handler: h.addJob),
            .init("SetJobState", inputs: [.init("id", "s"), .init("state", "s")], handler: h.setJobState),
            .init("RemoveJob", inputs: [.init("id", "s")], handler: h.removeJob),
            .init("RetryJobs", handler: h.retryJobs),
            .init("CancelJobs", handler: h.cancelJobs),
        ]
    }

    /// The `Jobs` property value.
    public static func jobsValue(_ jobs: [Job]) -> BusValue {
        .array(element: "(sst)", jobs.map { .structure([.string($0.id), .string($0.commandLine), .uint64($0.state.code)]) })
    }

    /// (id, command line, state) of each entry of a `Jobs` value; entries of another shape are skipped.
    public static func jobs(from value: BusValue) -> [(id: String, commandLine: String, state: JobState)] {
        guard case .array(_, let entries) = value else { return [] }
        return entries.compactMap { entry in
            guard case .structure(let f) = entry, f.count == 3, let id = f[0].string, let line = f[1].string,
                  let code = f[2].uint64, let state = JobState.allCases.first(where: { $0.code == code })
            else { return nil }
            return (id, line, state)
        }
    }

    /// The arguments of `JobsRequested`: the action and the ids; nil for anything else.
    public static func jobsRequest(from arguments: [BusValue]) -> JobRequest? {
        guard arguments.count == 2, let action = arguments[0].string.flatMap(JobAction.init(rawValue:)),
              case .array("s", let ids) = arguments[1]
        else { return nil }
        return JobRequest(action: action, ids: ids.compactMap(\.string))
    }
}
