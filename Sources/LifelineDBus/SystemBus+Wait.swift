import Glibc
import LifelineCore
import LifelinePlatform

extension SystemBus {
    /// The socket file of a `unix:path=` address; nil for any other kind
    /// (abstract, TCP), which has no file to wait for.
    public static func socketPath(_ address: String) -> String? {
        guard address.hasPrefix("unix:path=") else { return nil }
        return String(address.dropFirst("unix:path=".count).prefix { $0 != "," })
    }

    /// Waits before the next attempt to reach the bus at `address`. A socket
    /// file that is missing is waited for until it is created, with no timer
    /// (inotify on its folder): a desktop without a system bus never wakes the
    /// daemon for it. A bus that is there and did not answer, or that has no
    /// socket file, is tried again after `pause`.
    /// - Returns: true when it waited for the socket to appear (the caller's
    ///   back-off can start again from its shortest pause).
    public static func waitBeforeRetrying(_ address: String, pause: Duration) async -> Bool {
        if let socket = socketPath(address), access(socket, F_OK) != 0 {
            await FolderWatch.waitUntilExists(socket, fallback: pause)
            return true
        }
        try? await Task.sleep(for: pause)
        return false
    }
}
