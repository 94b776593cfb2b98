/// The sinks' mailboxes: every update is posted to each of them. A post is a
/// hand-off that never waits for a sink, so the bus can fan out under its
/// lock and a sink that hangs slows no one.
struct FanOut {
    private var mailboxes: [Mailbox] = []

    /// Puts `new` in `old`'s place (or beside the others when `old` is nil),
    /// seeded with `current` so its sink starts from the current state. `old`
    /// takes no more but keeps what waits in it: its sink drains it and ends.
    mutating func replace(_ old: Mailbox?, with new: Mailbox, current: Update) {
        if let old {
            mailboxes.removeAll { $0 === old }
            old.finish()
        }
        new.post(current)
        mailboxes.append(new)
    }

    /// Takes no more updates for `mailbox`; its sink drains what waits and ends.
    mutating func detach(_ mailbox: Mailbox) {
        mailboxes.removeAll { $0 === mailbox }
        mailbox.finish()
    }

    func post(_ update: Update) {
        for mailbox in mailboxes { mailbox.post(update) }
    }

    /// Ends every mailbox at once, dropping what waits (daemon shutdown).
    mutating func close() {
        for mailbox in mailboxes { mailbox.close() }
        mailboxes = []
    }
}
