import LifelineCore
import LifelineFormats

/// A source of state changes for `lifeline watch`, kept apart from the rendering
/// (`WatchFormat`) so the D-Bus signal and the state file can both drive it.
protocol WatchSource {
    /// Calls `deliver` with the current state at once (nil: no daemon runs), then
    /// again whenever it may have changed, until `deliver` returns false.
    /// Repeated states are fine: the caller prints only lines that differ.
    /// `refreshAfterMs`: when to call again although nothing changed (nil: never).
    func run(refreshAfterMs: (StateEvent?) -> Int32?, _ deliver: (StateEvent?) -> Bool) throws
}

/// Changes seen through the runtime state file (`StateFileWatch`).
struct StateFileSource: WatchSource {
    let path: String

    func run(refreshAfterMs: (StateEvent?) -> Int32?, _ deliver: (StateEvent?) -> Bool) throws {
        try StateFileWatch(path: path).run(refreshAfterMs: refreshAfterMs, deliver)
    }
}
