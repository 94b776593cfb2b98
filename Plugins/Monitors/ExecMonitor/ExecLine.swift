import LifelineCore
import LifelineFormats

/// One line of an exec monitor's output, parsed and checked. Its text is
/// cleaned here, where it enters: whatever a third-party program prints, the
/// interface and reason that go on to the toast, tmux, the terminal and the log
/// are bounded and hold no control characters (invalid UTF-8 was already
/// replaced when the line was split), and the error for a bad line quotes it
/// the same way.
package enum ExecLine {
    package struct Invalid: Error, CustomStringConvertible {
        package var description: String
    }

    /// The members a line may carry; others are ignored, so a newer program
    /// may add some.
    private struct Wire {
        var state: String?
        var interface: String?
        var kind: String?
        var reason: String?
        var rttMs: Double?
        var metered: Bool?
    }

    static let allowedStates: [ConnectivityState] = [.offline, .limited, .portal, .online]
    /// In UTF-8 bytes. Kernel interface names have at most 15; a program may
    /// name something longer ("vpn: office"), never a paragraph.
    package static let maxInterfaceLength = 64
    package static let maxReasonLength = 512

    package static func parse(_ line: String, role: ExecMonitor.Config.Role) -> Result<Observation, Invalid> {
        let trimmed = String(line.trimmingSpaces())
        guard trimmed.hasPrefix("{") else {
            return .failure(Invalid(description: "not a JSON object: \(quoted(line))"))
        }
        let wire: Wire
        switch read(trimmed) {
        case .success(let w): wire = w
        case .failure(let problem): return .failure(Invalid(description: "\(problem): \(quoted(line))"))
        }
        guard let stateName = wire.state else {
            return .failure(Invalid(description: "missing \"state\": \(quoted(line))"))
        }
        guard let state = ConnectivityState(rawValue: stateName), allowedStates.contains(state) else {
            let known = allowedStates.map(\.rawValue).joined(separator: ", ")
            return .failure(Invalid(description: "unknown state '\(quoted(stateName))' (known: \(known))"))
        }
        var kind = InterfaceKind.none
        if let k = wire.kind {
            guard let parsed = InterfaceKind(rawValue: k) else {
                let known = InterfaceKind.allCases.map(\.rawValue).filter { !$0.isEmpty }.joined(separator: ", ")
                return .failure(Invalid(description: "unknown kind '\(quoted(k))' (known: \(known))"))
            }
            kind = parsed
        }
        if let rtt = wire.rttMs, !(rtt.isFinite && rtt >= 0) {
            return .failure(Invalid(description: "rtt_ms must be a number ≥ 0, got \(rtt)"))
        }
        return .success(Observation(
            role: role == .link ? .link : .reachability,
            state: state,
            interface: cleaned(wire.interface ?? "", maxBytes: maxInterfaceLength, controls: nil),
            kind: kind,
            reason: cleaned(wire.reason ?? "reported by exec monitor", maxBytes: maxReasonLength, controls: " "),
            rttMs: wire.rttMs,
            metered: wire.metered
        ))
    }

    /// The line's members, each checked for its type; the problem otherwise.
    /// A member given as null counts as absent.
    private static func read(_ text: String) -> Result<Wire, WireProblem> {
        var wire = Wire()
        var problem: WireProblem?
        let wellFormed = FlatJSON.forEachMember(Array(text.utf8)) { key, value in
            guard problem == nil, value != .null else { return }
            switch (key, value) {
            case ("state", .string(let s)): wire.state = s
            case ("interface", .string(let s)): wire.interface = s
            case ("kind", .string(let s)): wire.kind = s
            case ("reason", .string(let s)): wire.reason = s
            case ("rtt_ms", .number): wire.rttMs = value.double
            case ("metered", .bool(let b)): wire.metered = b
            case ("state", _), ("interface", _), ("kind", _), ("reason", _), ("rtt_ms", _), ("metered", _):
                problem = .wrongType(key)
            default: break
            }
        }
        guard wellFormed else { return .failure(.notValidJSON) }
        return problem.map { .failure($0) } ?? .success(wire)
    }

    private enum WireProblem: Error, CustomStringConvertible {
        case notValidJSON
        case wrongType(String)

        var description: String {
            switch self {
            case .notValidJSON: "not valid JSON"
            case .wrongType(let key): "\"\(key)\" has the wrong type"
            }
        }
    }

    /// `text` cut to at most `maxBytes` of UTF-8 (on a scalar boundary, ending
    /// in "…" when cut), with each control character replaced by `controls`
    /// (nil: removed). A newline would break every one-line surface; ESC would
    /// start an escape sequence on a terminal.
    static func cleaned(_ text: String, maxBytes: Int, controls: Unicode.Scalar?) -> String {
        var out = String.UnicodeScalarView()
        var bytes = 0
        for scalar in text.unicodeScalars {
            guard let kept = TerminalText.isControl(scalar) ? controls : scalar else { continue }
            let width = UTF8.width(kept)
            if bytes + width > maxBytes {
                // Make room for the ellipsis (3 bytes) by dropping what does not fit.
                while bytes + 3 > maxBytes, let last = out.popLast() { bytes -= UTF8.width(last) }
                out.append("…")
                break
            }
            out.append(kept)
            bytes += width
        }
        return String(out)
    }

    /// A piece of the program's output quoted in an error message (which goes to
    /// the daemon's log, maybe a terminal): short, control characters visible.
    static func quoted(_ text: String) -> String {
        let shown = TerminalText.visible(text).unicodeScalars
        guard shown.count > 80 else { return String(shown) }
        var cut = String.UnicodeScalarView()
        cut.append(contentsOf: shown.prefix(80))
        return String(cut) + "…"
    }
}
