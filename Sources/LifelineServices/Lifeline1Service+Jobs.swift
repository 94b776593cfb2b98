import LifelineCore
import LifelineDBus

/// The jobs methods of `org.lifeline.Lifeline1` (see `Lifeline1+Jobs.swift`).
///
/// The board lives in the core; this side checks what callers send, names the
/// caller as the owner, and tells owners when the user asks for Retry or Cancel.
/// Every answer is queued from the loop thread: nothing here waits.
extension Lifeline1Service {
    /// Errors a caller can get besides the standard ones.
    static let notOwnerError = "org.freedesktop.DBus.Error.AccessDenied"
    static let tooManyError = "org.freedesktop.DBus.Error.LimitsExceeded"

    func jobHandlers() -> Lifeline1.JobHandlers {
        Lifeline1.JobHandlers(
            addJob: { [weak self] call in self?.addJob(call) },
            setJobState: { [weak self] call in self?.setJobState(call) },
            removeJob: { [weak self] call in self?.removeJob(call) },
            retryJobs: { [weak self] call in self?.request(.retry, call) },
            cancelJobs: { [weak self] call in self?.request(.cancel, call) }
        )
    }

    /// The board, or an answer saying why there is none yet.
    private func board(for call: MethodCall) -> (JobControl, String)? {
        guard let jobs = jobControl else {
            call.fail(BusError(name: BusError.failed, "the daemon is starting"))
            return nil
        }
        guard let sender = call.message.sender, !sender.isEmpty else {
            call.fail(BusError(name: BusError.failed, "a job needs a caller with a unique name"))
            return nil
        }
        return (jobs, sender)
    }

    private func addJob(_ call: MethodCall) {
        guard let (jobs, owner) = board(for: call), let commandLine = call.arguments.first?.string else { return }
        let job: Job
        do {
            job = try jobs.add(commandLine: commandLine, owner: owner)
        } catch {
            return call.fail(Self.busError(error))
        }
        call.reply([.string(job.id)])
        logger.info("job \(job.id) of \(owner) waits for the network: \(job.commandLine)")
        // A caller that left before its call was handled has no one to tell the
        // daemon it is gone: ask the bus, so its job does not stay forever.
        guard let connection = currentConnection else { return }
        Task { [weak self] in
            guard let present = await Self.hasOwner(owner, on: connection), !present else { return }
            self?.jobControl?.removeAll(ownedBy: owner)
        }
    }

    private func setJobState(_ call: MethodCall) {
        guard let (jobs, owner) = board(for: call) else { return }
        let id = call.arguments[0].string ?? ""
        let text = call.arguments[1].string ?? ""
        guard let state = JobState(rawValue: text) else {
            let names = JobState.allCases.map(\.rawValue).joined(separator: ", ")
            return call.fail(BusError(name: BusError.invalidArgs,
                                      "SetJobState takes a state (\(names)), got '\(BusError.shown(text))'"))
        }
        do {
            try jobs.setState(state, of: id, by: owner)
            call.reply()
        } catch {
            call.fail(Self.busError(error))
        }
    }

    private func removeJob(_ call: MethodCall) {
        guard let (jobs, owner) = board(for: call) else { return }
        do {
            try jobs.remove(call.arguments.first?.string ?? "", by: owner)
            call.reply()
        } catch {
            call.fail(Self.busError(error))
        }
    }

    private func request(_ action: JobAction, _ call: MethodCall) {
        guard let (jobs, caller) = board(for: call) else { return }
        logger.info("\(action == .retry ? "RetryJobs" : "CancelJobs") by \(caller)")
        jobs.request(action)
        call.reply()
    }

    static func busError(_ refusal: JobRefusal) -> BusError {
        switch refusal.reason {
        case .invalidArgument, .unknownJob: BusError(name: BusError.invalidArgs, refusal.message)
        case .notOwner: BusError(name: notOwnerError, refusal.message)
        case .tooMany: BusError(name: tooManyError, refusal.message)
        }
    }

    /// Tells the jobs' owners what the user asked (toast buttons, `RetryJobs()`,
    /// `CancelJobs()`) with `JobsRequested`, until cancelled.
    func relayJobRequests() async {
        guard let jobs = jobControl else { return }
        for await request in jobs.requests() {
            guard let connection = currentConnection else { continue }
            do {
                try connection.emit(path: Lifeline1.objectPath, interface: Lifeline1.interfaceName,
                                    member: Lifeline1.jobsRequestedSignal,
                                    [.string(request.action.rawValue), .array(element: "s", request.ids.map { .string($0) })])
            } catch {
                logger.error("cannot emit \(Lifeline1.jobsRequestedSignal): \(error)")
            }
        }
    }

    /// Drops a connection's jobs when it leaves the bus. The match is added with
    /// an asynchronous call: the loop thread never waits for the bus.
    func followJobOwners(on connection: BusConnection) async {
        connection.onSignal { [weak self] message in
            // Only the bus says who left; any peer could send this signal to drop another's jobs.
            guard let change = NameOwnerChange(message), change.name.hasPrefix(":"), change.newOwner.isEmpty else { return }
            self?.jobControl?.removeAll(ownedBy: change.name)
        }
        do {
            try await connection.subscribe(to: NameOwnerChange.matchRule(), timeout: .seconds(5))
        } catch {
            logger.warning("cannot follow callers leaving the bus (\(error)); a killed `lifeline run` may leave its job listed")
        }
    }

    /// Whether `name` is on the bus; nil when the bus did not say.
    static func hasOwner(_ name: String, on connection: BusConnection) async -> Bool? {
        guard let m = try? BusMessage.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                 interface: "org.freedesktop.DBus", member: "NameHasOwner"),
              (try? m.append(.string(name))) != nil,
              let reply = try? await connection.call(m, timeout: .seconds(5))
        else { return nil }
        return (try? reply.arguments())?.first?.bool
    }
}
