import Glibc
import LifelineCore
import LifelineDBus

/// What `wait-online` and `run` wait for, from the daemon's signals on the
/// session bus and from the process's own signals, in one `poll`: no polling
/// of the state, and a transition is seen the moment the daemon sends it.
///
/// The subscription is made before the current state is asked for, so no
/// transition falls in between; signals that were queued while `GetStatus` was
/// answered and predate its answer are dropped by their sequence number. A
/// signal counts only from the daemon (the owner of its name): another program
/// must not start a job, nor cancel or retry one, by claiming a state.
final class DaemonEvents {
    enum Event {
        /// A published state (a transition, or the state after the daemon came back).
        case state(StateEvent)
        /// Retry or Cancel for some jobs (the ids say which).
        case jobs(JobRequest)
        /// The daemon left the bus.
        case daemonGone
        /// A daemon took the name again; its state now.
        case daemonBack(StateEvent)
        /// SIGINT, SIGTERM or SIGCHLD.
        case signal(Int32)
        case timedOut
        /// The session bus itself went away.
        case busLost
    }

    let client: DaemonClient
    private(set) var current: StateEvent
    private var order = SequenceOrder()
    private var daemon: NameOwner
    private var queued: [Event] = []

    /// Subscribes, then reads the state. Throws `.noDaemon` when no daemon answers.
    init(client: DaemonClient) throws(DaemonClient.Failure) {
        self.client = client
        do {
            daemon = try client.subscribe(to: ["StateChanged", Lifeline1.jobsRequestedSignal])
        } catch {
            throw .call(error)
        }
        current = try client.status()
        _ = order.accepts(current)
    }

    /// The next event, waiting at most until `deadline` (nil: no limit).
    func next(until deadline: ContinuousClock.Instant?) -> Event {
        while true {
            if !queued.isEmpty { return queued.removeFirst() }
            let signals = SignalPipe.drain()
            if let first = signals.first {
                queued += signals.dropFirst().map { .signal($0) }
                return .signal(first)
            }
            if let message = client.connection.popMessage() {
                if let event = interpret(message) { return event }
                continue
            }
            var timeout: Int32 = -1
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                if left <= .zero { return .timedOut }
                let (s, atto) = left.components
                // Rounded up, so the wait never ends a fraction of a millisecond early.
                timeout = Int32(clamping: s * 1000 + (atto + 999_999_999_999_999) / 1_000_000_000_000_000)
            }
            guard let busFD = client.connection.fileDescriptor else { return .busLost }
            var fds = [pollfd(fd: busFD, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: SignalPipe.readEnd, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, timeout)
            if ready < 0, errno != EINTR { return .busLost }
            if fds[0].revents != 0, !client.connection.readWrite(timeoutMs: 0) { return .busLost }
        }
    }

    private func interpret(_ message: BusMessage) -> Event? {
        if let change = daemon.follow(message) {
            // A new daemon counts its sequence on from its state file; start afresh all the same.
            order = SequenceOrder()
            if change.newOwner.isEmpty { return .daemonGone }
            guard let event = try? client.status() else { return .daemonGone }
            _ = order.accepts(event)
            current = event
            return .daemonBack(event)
        }
        guard daemon.sent(message) else { return nil }
        if message.is(interface: Lifeline1.interfaceName, member: "StateChanged", signature: "ssa{sv}") {
            guard let args = try? message.arguments(), args.count == 3, let pairs = args[2].vardictEntries,
                  let event = Lifeline1.event(fromDetails: pairs), order.accepts(event)
            else { return nil }
            current = event
            return .state(event)
        }
        if message.is(interface: Lifeline1.interfaceName, member: Lifeline1.jobsRequestedSignal, signature: "sas") {
            guard let args = try? message.arguments(), let request = Lifeline1.jobsRequest(from: args) else { return nil }
            return .jobs(request)
        }
        return nil
    }
}
