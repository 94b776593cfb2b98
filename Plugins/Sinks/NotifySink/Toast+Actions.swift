import LifelineCore

/// The actions a toast offers, each once, as the user should see them: the
/// notifier decides, per server, how they reach the screen (`ToastServer`).
extension Toast {
    /// One action: `key` comes back from the server when it is invoked.
    public struct Button: Equatable, Sendable {
        public var key: String
        public var label: String

        public init(key: String, label: String) {
            self.key = key
            self.label = label
        }
    }

    /// "Check now": a probe at once.
    static let checkNowAction = "retry"
    /// "Mute for 1 hour".
    static let muteAction = "mute"

    /// "Extend": opens the network's sign-in page, where RFC 8908 says a session is extended.
    static let extendAction = "extend"

    /// Every action of this toast, in the order the buttons are drawn.
    public var buttons: [Button] {
        if extendsSession { return [Button(key: Self.extendAction, label: labels.extend)] }
        guard hasActions else { return [] }
        var all = [Button(key: Self.checkNowAction, label: labels.checkNow)]
        if hasSignInAction { all.append(Button(key: Self.signInAction, label: labels.signIn)) }
        all.append(Button(key: Self.muteAction, label: labels.mute))
        if hasJobActions {
            all += [Button(key: Self.retryJobsAction, label: labels.retry), Button(key: Self.cancelJobsAction, label: labels.cancel)]
        }
        return all
    }
}
