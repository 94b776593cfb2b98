import FoundationEssentials
import LifelineCore

/// One line of an exec monitor's output, parsed and checked.
enum ExecLine {
    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    private struct Wire: Decodable {
        var state: String
        var interface: String?
        var kind: String?
        var reason: String?
        var rtt_ms: Double?
        var metered: Bool?
    }

    static let allowedStates: [ConnectivityState] = [.offline, .limited, .portal, .online]

    static func parse(_ line: String, role: ExecMonitor.Config.Role) -> Result<Observation, Invalid> {
        let trimmed = String(line.trimmingSpaces())
        guard trimmed.hasPrefix("{") else {
            return .failure(Invalid(description: "not a JSON object: \(preview(line))"))
        }
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: Data(trimmed.utf8))
        } catch DecodingError.keyNotFound(let key, _) {
            return .failure(Invalid(description: "missing \"\(key.stringValue)\": \(preview(line))"))
        } catch DecodingError.typeMismatch(_, let ctx) {
            let key = ctx.codingPath.last?.stringValue ?? "?"
            return .failure(Invalid(description: "\"\(key)\" has the wrong type: \(preview(line))"))
        } catch {
            return .failure(Invalid(description: "not valid JSON: \(preview(line))"))
        }
        guard let state = ConnectivityState(rawValue: wire.state), allowedStates.contains(state) else {
            let known = allowedStates.map(\.rawValue).joined(separator: ", ")
            return .failure(Invalid(description: "unknown state '\(wire.state)' (known: \(known))"))
        }
        var kind = InterfaceKind.none
        if let k = wire.kind {
            guard let parsed = InterfaceKind(rawValue: k) else {
                let known = InterfaceKind.allCases.map(\.rawValue).filter { !$0.isEmpty }.joined(separator: ", ")
                return .failure(Invalid(description: "unknown kind '\(k)' (known: \(known))"))
            }
            kind = parsed
        }
        if let rtt = wire.rtt_ms, !(rtt.isFinite && rtt >= 0) {
            return .failure(Invalid(description: "rtt_ms must be a number ≥ 0, got \(rtt)"))
        }
        return .success(Observation(
            role: role == .link ? .link : .reachability,
            state: state,
            interface: String((wire.interface ?? "").prefix(64)),
            kind: kind,
            reason: String((wire.reason ?? "reported by exec monitor").prefix(512)),
            rttMs: wire.rtt_ms,
            metered: wire.metered
        ))
    }

    private static func preview(_ line: String) -> String {
        line.count > 80 ? String(line.prefix(80)) + "…" : line
    }
}
