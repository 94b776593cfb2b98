import LifelineCore
import LifelinePlatform

/// What the toast says, in the language of a translator (`Translator.english`:
/// the English toast, word for word as it has always read). The sentences are
/// made from the event's fields at the moment the toast is shown, so the reason
/// the log keeps in English never has to be translated back.
extension ToastPolicy {
    static func toast(for e: StateEvent, checked: Bool = false, _ t: Translator = .english) -> Toast {
        let connection = e.connectionText(t)
        let named: KeyValuePairs<String, String> = ["connection": connection]
        var toast: Toast
        let still: String
        switch e.state {
        case .offline:
            still = t.tr("Checked just now: still offline.")
            toast = Toast(summary: t.tr("Offline"), body: sentence(e.reasonText(t), t, or: t.tr("No network connection.")),
                          icon: "network-offline", urgency: .critical, hasActions: true, timeout: 0)
        case .portal:
            still = t.tr("Checked just now: still waiting for you to sign in.")
            let first = connection.isEmpty ? t.tr("The network wants you to sign in first.")
                : t.tr("The network on {connection} wants you to sign in first.", named)
            toast = Toast(summary: t.tr("Sign in to the network"), body: first + " " + sentence(e.reasonText(t), t, or: ""),
                          icon: "network-error", urgency: .normal, hasActions: true, timeout: 0)
            toast.hasSignInAction = true
        default:
            still = t.tr("Checked just now: still no internet.")
            let first = connection.isEmpty ? t.tr("The network does not reach the internet.")
                : t.tr("The network on {connection} does not reach the internet.", named)
            toast = Toast(summary: t.tr("Connected, but no internet"), body: first + " " + sentence(e.reasonText(t), t, or: ""),
                          icon: "network-error", urgency: .normal, hasActions: true, timeout: 0)
        }
        toast.labels = Toast.Labels(t)
        if checked { toast.body = still + " " + toast.body }
        return toast
    }

    static func backOnline(_ outage: Outage, event: StateEvent, _ t: Translator = .english) -> Toast {
        let lasted = t.duration(.microseconds((outage.endedAt ?? outage.since) - outage.since))
        let connection = event.connectionText(t)
        let values: KeyValuePairs<String, String> = ["connection": connection, "duration": lasted]
        let body = switch (outage.worst == .offline, connection.isEmpty) {
        case (true, true): t.tr("Back online — offline for {duration}.", values)
        case (true, false): t.tr("Back online via {connection} — offline for {duration}.", values)
        case (false, true): t.tr("Back online — without internet for {duration}.", values)
        case (false, false): t.tr("Back online via {connection} — without internet for {duration}.", values)
        }
        // Normal, not low: GNOME Shell shows no banner for a low-urgency toast,
        // so "Back online" would only be found in its message list.
        return Toast(summary: t.tr("Back online"), body: body, icon: "network-transmit-receive", urgency: .normal,
                     hasActions: false, timeout: 5000, category: "network.connected")
    }

    /// The reason as a sentence: a capital first letter and a full stop. A
    /// translated sentence is written as its language wants it, and one that
    /// starts with an interface keeps its name as the system spells it ("wlan0").
    /// Addresses in it are shown as their host alone (`ToastAddresses`).
    private static func sentence(_ text: String, _ t: Translator, or fallback: String) -> String {
        let text = ToastAddresses.hostsOnly(text)
        guard let first = text.first else { return fallback }
        var s = t.isTranslating ? text : first.uppercased() + text.dropFirst()
        if !s.hasSuffix(".") { s += "." }
        return s
    }
}

extension Toast {
    /// The action that opens the portal's sign-in page in the browser.
    static let signInAction = "signin"

    /// The buttons' labels, in the toast's language.
    public struct Labels: Equatable, Sendable {
        public var checkNow, mute, retry, cancel, signIn, extend: String

        public init(_ t: Translator = .english) {
            checkNow = t.tr("Check now")
            signIn = t.tr("Open sign-in page")
            mute = t.tr("Mute for 1 hour")
            retry = t.tr("Retry")
            cancel = t.tr("Cancel")
            extend = t.tr("Extend")
        }
    }
}
