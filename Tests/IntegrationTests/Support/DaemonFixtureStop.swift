import Foundation
import LifelineTestKit

extension DaemonFixture {
    /// Stops the daemon before returning: SIGTERM, up to `timeout` for it to
    /// end, then SIGKILL; it is reaped either way. Meant for `defer`: a task
    /// started there may never run (a filtered run can end first), and the
    /// daemon it should have stopped, with the bus or display it holds,
    /// would outlive the test.
    func stopNow(timeout: Duration = .seconds(10)) {
        process?.stop(timeout: timeout)
    }
}
