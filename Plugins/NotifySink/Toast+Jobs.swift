import LifelineCore

/// The outage toast's line for `lifeline run`'s commands: how many wait for the
/// network, with Retry (run them now) and Cancel. It changes in place with the
/// count, like the rest of the toast.
extension Toast {
    static let retryJobsAction = "jobs-retry"
    static let cancelJobsAction = "jobs-cancel"

    /// This toast with the waiting commands counted, and their actions; as it is when none wait.
    func listing(_ jobs: [Job]) -> Toast {
        let waiting = jobs.count(where: \.isWaiting)
        guard waiting > 0 else { return self }
        var toast = self
        toast.body += " " + Self.waitingLine(waiting)
        toast.hasJobActions = true
        return toast
    }

    static func waitingLine(_ count: Int) -> String {
        count == 1 ? "1 command waiting for the network." : "\(count) commands waiting for the network."
    }
}
