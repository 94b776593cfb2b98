import LifelineCore

/// Turns a toast's text into what the notification server receives: escaped
/// for servers that read body markup, without control characters, bounded
/// (`MarkupText` says why). The notifier sends nothing else.
enum ToastText {
    /// Longest summary and body, in Unicode scalars, before "…".
    static let summaryLimit = 100
    static let bodyLimit = 500

    static func summary(_ text: String, markup: Bool) -> String {
        MarkupText.prepared(text, limit: summaryLimit, markup: markup)
    }

    static func body(_ text: String, markup: Bool) -> String {
        MarkupText.prepared(text, limit: bodyLimit, markup: markup)
    }
}
