import LifelineTestKit
import Testing

/// `eventually`, recording an issue that names what never happened.
@discardableResult
func waitUntil(
    _ what: String, timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () throws -> Bool
) async rethrows -> Bool {
    let held = try await eventually(timeout: timeout, every: .milliseconds(10), condition)
    if !held { Issue.record("timed out after \(timeout) waiting for \(what)", sourceLocation: sourceLocation) }
    return held
}
