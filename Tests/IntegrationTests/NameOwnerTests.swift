import Foundation
import LifelineDBus
import Testing

/// `NameOwner` on a real (private) bus: a peer that addresses signals straight
/// to a connection can say it owns a name, or speak for it; only the bus's own
/// `NameOwnerChanged` moves the owner, and only the owner is believed.
@Suite struct NameOwnerTests {
    static let name = "org.example.Speaker"

    /// Every message the connection has received within `window`.
    func received(_ connection: BusConnection, within window: Duration = .milliseconds(500)) -> [BusMessage] {
        var out: [BusMessage] = []
        let deadline = ContinuousClock.now + window
        while ContinuousClock.now < deadline {
            _ = connection.readWrite(timeoutMs: 20)
            while let m = connection.popMessage() { out.append(m) }
        }
        return out
    }

    func emit(_ bus: PrivateBus, to destination: String, path: String, signal: String, _ arguments: [String]) throws {
        let r = try Harness.run(["gdbus", "emit", "--address", bus.address, "--dest", destination,
                                 "--object-path", path, "--signal", signal] + arguments)
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test(.requires(.tools(["dbus-daemon", "gdbus"]))) func onlyTheBusSaysWhoOwnsANameAndOnlyTheOwnerIsBelieved() throws {
        let bus = try PrivateBus()
        let listener = try BusConnection.connect(address: bus.address)
        var speaker = NameOwner(Self.name)
        try listener.addMatch(speaker.matchRule)
        try listener.addMatch("type='signal',sender='\(Self.name)',interface='org.example.Speaker'")
        speaker.owner = try listener.ownerBlocking(of: Self.name)
        #expect(speaker.owner == nil)

        // A stranger says, to this connection alone, that it took the name; then speaks for it.
        try emit(bus, to: listener.uniqueName, path: "/org/freedesktop/DBus", signal: "org.freedesktop.DBus.NameOwnerChanged",
                 [Self.name, "", ":1.999"])
        try emit(bus, to: listener.uniqueName, path: "/", signal: "org.example.Speaker.Said", ["'lies'"])
        // (The bus's own NameAcquired, for the listener's unique name, is left out.)
        let fakes = received(listener).filter { $0.member != "NameAcquired" }
        #expect(fakes.map { $0.member ?? "" } == ["NameOwnerChanged", "Said"], "both reached the connection")
        for message in fakes {
            #expect(speaker.follow(message) == nil, "a NameOwnerChanged from \(message.sender ?? "?") was believed")
            #expect(!speaker.sent(message), "a signal from \(message.sender ?? "?") was believed")
        }
        #expect(speaker.owner == nil)

        // The real owner takes the name: the bus says so, and its signals count.
        let real = try BusConnection.connect(address: bus.address)
        let request = try BusMessage.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                interface: "org.freedesktop.DBus", member: "RequestName")
        try request.append(.string(Self.name), .uint32(4))
        _ = try real.callBlocking(request)
        var changes: [NameOwnerChange] = []
        for message in received(listener) { if let change = speaker.follow(message) { changes.append(change) } }
        #expect(changes == [NameOwnerChange(name: Self.name, oldOwner: "", newOwner: real.uniqueName)])
        #expect(speaker.owner == real.uniqueName)
        try real.emit(path: "/", interface: "org.example.Speaker", member: "Said", [.string("truth")])
        try emit(bus, to: listener.uniqueName, path: "/", signal: "org.example.Speaker.Said", ["'lies'"])
        let said = received(listener).filter { $0.member == "Said" }
        #expect(said.count == 2)
        #expect(said.filter(speaker.sent).compactMap { try? $0.arguments().first?.string } == ["truth"])
    }
}
