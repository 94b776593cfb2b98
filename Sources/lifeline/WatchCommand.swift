import ArgumentParser
import DBusSink
import Glibc
import LifelineCore
import LifelineDBus

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print a line per state change until killed.",
        discussion: """
            Prints the current state at once, then one line per StateChanged signal of
            org.lifeline.Lifeline1, each flushed as it comes. When the daemon stops, prints an
            `unknown` line; when it comes back, its state.
            """
    )

    @Option(help: "Output format: plain or json.")
    var format: WatchFormat = .plain

    func run() throws {
        let client: DaemonClient
        do { client = try DaemonClient.connect() } catch {
            printError("\(error)")
            throw ExitCode(3)
        }
        let bus = client.connection
        do {
            // Subscribe before asking for the state: nothing falls in between.
            try bus.addMatch("type='signal',sender='\(Lifeline1.busName)',path='\(Lifeline1.objectPath)',interface='\(Lifeline1.interfaceName)',member='StateChanged'")
            try bus.addMatch("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(Lifeline1.busName)'")
        } catch {
            printError("cannot subscribe: \(error)")
            throw ExitCode(1)
        }
        var printer = WatchPrinter(format: format)
        printer.show(Self.currentOrUnknown(client))
        repeat {
            while let message = bus.popMessage() {
                if message.is(interface: Lifeline1.interfaceName, member: "StateChanged") {
                    guard let args = try? message.arguments(), args.count == 3,
                          let pairs = args[2].vardictEntries, let event = Lifeline1.event(fromDetails: pairs)
                    else { continue }
                    printer.show(event)
                } else if message.is(interface: "org.freedesktop.DBus", member: "NameOwnerChanged") {
                    guard let args = try? message.arguments(), args.count == 3, let owner = args[2].string else { continue }
                    // A new daemon counts its sequence from 0 again.
                    printer.restart()
                    printer.show(owner.isEmpty ? Self.noDaemon : Self.currentOrUnknown(client))
                }
            }
        } while bus.readWrite(timeoutMs: -1)
        printError("lost the session bus")
        throw ExitCode(1)
    }

    static var noDaemon: StateEvent {
        StateEvent(state: .unknown, previous: .unknown, since: WallClock.micros(), reason: "no daemon running", sequence: 0)
    }

    static func currentOrUnknown(_ client: DaemonClient) -> StateEvent {
        (try? client.status()) ?? noDaemon
    }
}

/// The formats of `lifeline watch`; one line per event.
enum WatchFormat: String, ExpressibleByArgument, CaseIterable {
    case plain, json

    func line(_ e: StateEvent, now: Int64) -> String {
        switch self {
        case .plain: StatusFormat.render(StatusCommand.plain(e), e, now: now)
        case .json: JSONText.object(e)
        }
    }
}

/// Prints each event once, in sequence order, and exits quietly when the reader goes.
struct WatchPrinter {
    let format: WatchFormat
    private var lastSequence: UInt64?

    init(format: WatchFormat) { self.format = format }

    mutating func restart() { lastSequence = nil }

    mutating func show(_ e: StateEvent) {
        // Signals queued while GetStatus was answered may be older than what it said.
        if let last = lastSequence, e.sequence <= last, e.sequence != 0 { return }
        lastSequence = e.sequence
        if !writeLine(format.line(e, now: WallClock.micros())) { Glibc.exit(0) }
    }
}
