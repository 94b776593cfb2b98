import LifelineDBus
import Testing

/// A reply that should carry a descriptor (logind's Inhibit) but carries
/// something else is an error naming what came, never a crash.
@Suite struct UnixFDTests {
    /// A message with `arguments` (a signal: a reply needs a call that was sent, and
    /// the descriptor is read the same way from any message).
    func reply(_ arguments: [BusValue]) throws -> BusMessage {
        let message = try BusMessage.signal(path: "/org/freedesktop/login1", interface: "org.freedesktop.login1.Manager",
                                            member: "Inhibit")
        try message.append(arguments)
        return message
    }

    @Test(arguments: [[], [BusValue.string("fd")], [.int32(3)]])
    func aReplyWithoutADescriptorIsAnError(_ arguments: [BusValue]) throws {
        let message = try reply(arguments)
        do {
            let fd = try message.takeUnixFD()
            Issue.record("took descriptor \(fd) from '\(message.signature)'")
        } catch {
            #expect(error.name == BusError.invalidArgs)
            #expect(error.message == "expected a file descriptor, got '\(message.signature)'")
        }
    }
}
