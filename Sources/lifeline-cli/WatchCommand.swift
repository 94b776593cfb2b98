import ArgumentParser
import Glibc
import LifelineCore
import LifelineDBus
import LifelineFormats
import LifelinePlatform

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print the state at once and again on every change, until killed.",
        discussion: """
            Formats: plain, json (every field), i3bar (i3bar/swaybar protocol: header, then one \
            status line per change), waybar (one object per line for a custom module with \
            return-type json), or a template with status --format fields, e.g. '{icon} {state}'.
            Changes come from the daemon's StateChanged signal on the session bus, else from the \
            runtime state file. Each line is written at once (no buffering). While no daemon runs \
            it shows 'unknown'.
            """
    )

    @Option(help: "plain, json, i3bar, waybar, or a template such as '{icon} {state}'.")
    var format: String = "plain"

    func validate() throws {
        if WatchFormat(argument: format) == nil {
            throw ValidationError("--format must be \(WatchFormat.names.joined(separator: ", ")) or a template with {fields}, got '\(format)'")
        }
    }

    func run() throws {
        let format = WatchFormat(argument: format)!
        // A bar that goes away closes the pipe: finish quietly instead of dying on SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        for line in format.header { Self.emit(line) }
        var last: String?
        do {
            try Self.source(paths: .fromEnvironment()).run(
                refreshAfterMs: { format.refreshAfterMs($0, now: WallClock.micros()) }
            ) { event in
                let line = format.line(event, now: WallClock.micros())
                guard line != last else { return true }
                last = line
                return StandardOutput.writeLine(line)
            }
        } catch {
            printError("\(error)")
            throw ExitCode(1)
        }
    }

    /// Where changes come from: the daemon's D-Bus signal when it answers on the
    /// session bus (no file system involved, every transition in order); else the
    /// runtime state file, which every daemon writes, D-Bus or not.
    static func source(paths: Paths) -> any WatchSource {
        if let client = try? DaemonClient.connect(), (try? client.status()) != nil {
            return DBusWatchSource(client: client)
        }
        return StateFileSource(path: paths.stateFile)
    }

    /// One line, written straight to the file descriptor; ends quietly when the reader is gone.
    static func emit(_ line: String) {
        if !StandardOutput.writeLine(line) { Glibc.exit(0) }
    }
}

/// Changes as signals of org.lifeline.Lifeline1: `StateChanged` carries each
/// transition; `PropertiesChanged` alone says the reason or round trip changed
/// within a state, and is applied to the state last shown, so `watch` prints a
/// line for those too, as it does from the state file. Both come in the order
/// the daemon sent them, so no line shows an older state after a newer one. The
/// daemon leaving or coming back is seen through `NameOwnerChanged`, and a
/// signal counts only from the daemon (the owner of its name).
struct DBusWatchSource: WatchSource {
    let client: DaemonClient

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    func run(refreshAfterMs: (StateEvent?) -> Int32?, _ deliver: (StateEvent?) -> Bool) throws {
        let bus = client.connection
        var daemon: NameOwner
        do {
            // Subscribe before asking for the state: nothing falls in between.
            daemon = try client.subscribe(to: ["StateChanged"], properties: true)
        } catch {
            throw Failure(description: "cannot subscribe: \(error)")
        }
        var order = SequenceOrder()
        var shown: StateEvent?
        var reading = true
        func show(_ e: StateEvent?) {
            if let e, !order.accepts(e) { return }
            shown = e
            reading = deliver(e) && reading
        }
        show(try? client.status())
        repeat {
            // Woken with no message: a line showing a duration is due again.
            show(shown)
            while reading, let message = bus.popMessage() {
                if let change = daemon.follow(message) {
                    // A new daemon counts its sequence from 0 again.
                    order = SequenceOrder()
                    show(change.newOwner.isEmpty ? nil : try? client.status())
                    continue
                }
                guard daemon.sent(message) else { continue }
                if message.is(interface: Lifeline1.interfaceName, member: "StateChanged", signature: "ssa{sv}") {
                    guard let args = try? message.arguments(), args.count == 3,
                          let pairs = args[2].vardictEntries, let event = Lifeline1.event(fromDetails: pairs)
                    else { continue }
                    show(event)
                } else if message.is(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", signature: "sa{sv}as") {
                    guard let current = shown, let args = try? message.arguments(), args.count >= 2,
                          let changed = args[1].vardictEntries
                    else { continue }
                    show(Self.applying(changed, to: current))
                }
            }
        } while reading && bus.readWrite(timeoutMs: refreshAfterMs(shown) ?? -1)
        if !reading { return }
        throw Failure(description: "lost the session bus")
    }

    /// `e` with the changed properties of a `PropertiesChanged` signal; those it
    /// does not show (a later daemon's additions) change nothing.
    static func applying(_ changed: [(String, BusValue)], to e: StateEvent) -> StateEvent {
        var fields = Lifeline1.details(e)
        for (property, value) in changed {
            guard let field = fieldOfProperty[property] else { continue }
            // The quality's fields are in the details only while it is known.
            guard let slot = fields.firstIndex(where: { $0.0 == field }) else {
                fields.append((field, value))
                continue
            }
            fields[slot].1 = value
        }
        return Lifeline1.event(fromDetails: fields) ?? e
    }

    /// Each property's field in the `details` map.
    static let fieldOfProperty = [
        "State": "state", "Previous": "previous", "Since": "since", "Interface": "interface", "Kind": "kind",
        "Reason": "reason", "RttMs": "rtt_ms", "Metered": "metered", "Sequence": "sequence",
        "Diagnosis": "diagnosis", "Quality": "quality", "QualityDetails": "quality_details",
    ]
}

/// Drops events older than one already shown: signals queued while `GetStatus`
/// was answered may predate its answer. The same sequence number again is the
/// same state with newer attributes (reason, round trip), and is shown.
struct SequenceOrder {
    private var last: UInt64?

    mutating func accepts(_ e: StateEvent) -> Bool {
        if let last, e.sequence < last, e.sequence != 0 { return false }
        last = e.sequence
        return true
    }
}
