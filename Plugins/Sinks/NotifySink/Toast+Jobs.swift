import LifelineCore
import LifelinePlatform

/// The outage toast's line for `lifeline run`'s commands: how many wait for the
/// network, with Retry (run them now) and Cancel. It changes in place with the
/// count, like the rest of the toast.
extension Toast {
    static let retryJobsAction = "jobs-retry"
    static let cancelJobsAction = "jobs-cancel"

    /// This toast with the waiting commands counted, and their actions; as it is when none wait.
    func listing(_ jobs: [Job], _ t: Translator = .english) -> Toast {
        let waiting = jobs.count(where: \.isWaiting)
        guard waiting > 0 else { return self }
        var toast = self
        toast.body += " " + Self.waitingLine(waiting, t)
        toast.hasJobActions = true
        return toast
    }

    static func waitingLine(_ count: Int, _ t: Translator = .english) -> String {
        t.trn("{count} command waiting for the network.", "{count} commands waiting for the network.", count,
              ["count": String(count)])
    }
}
