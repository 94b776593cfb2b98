import Foundation
import LifelineCore
import LifelineDBus
import LifelineGLib
import LifelineServices
import Logging
import Testing

/// The service in this process, on private buses: no daemon binary, no
/// process-wide state, so two services can run side by side.
@Suite struct Lifeline1ServiceTests {
    static func getStatus(_ client: BusConnection) throws -> [(String, BusValue)] {
        let m = try BusMessage.methodCall(destination: Lifeline1.busName, path: Lifeline1.objectPath,
                                          interface: Lifeline1.interfaceName, member: "GetStatus")
        return try client.callBlocking(m, timeout: .seconds(5)).arguments().first?.vardictEntries ?? []
    }

    @Test(.requires(.tools(["dbus-daemon"]))) func twoServicesInOneProcessEachOnItsOwnBus() async throws {
        let busA = try PrivateBus(), busB = try PrivateBus()
        let loop = MainLoopThread(name: "test-service")
        defer { loop.stop() }
        let core = Bus(clock: ContinuousClock())
        let a = Lifeline1Service(address: { busA.address }, logger: Logger(label: "test.a"), loop: loop)
        let b = Lifeline1Service(address: { busB.address }, logger: Logger(label: "test.b"), loop: loop)
        for service in [a, b] {
            service.bind(control: core, checkTimeout: .seconds(1))
            try await service.connect()
        }
        let online = StateEvent(state: .online, previous: .unknown, since: 1_700_000_000_000_000, interface: "eth0", kind: .ethernet,
                                reason: "probe answered", rttMs: 12, metered: false, sequence: 1)
        a.publish(Update(event: online, isTransition: true))

        let clientA = try BusConnection.connect(address: busA.address)
        let clientB = try BusConnection.connect(address: busB.address)
        let statusA = try Self.getStatus(clientA)
        #expect(Lifeline1.event(fromDetails: statusA) == online)
        #expect(statusA.first { $0.0 == "muted_until" }?.1 == .uint64(0))
        #expect(Lifeline1.event(fromDetails: try Self.getStatus(clientB))?.state == .unknown)

        // A third service on bus A finds the name taken and says by whom.
        let c = Lifeline1Service(address: { busA.address }, logger: Logger(label: "test.c"), loop: loop)
        await #expect(throws: PluginFatalError.self) { try await c.connect() }
        do {
            try await c.connect()
        } catch let fatal as PluginFatalError {
            #expect(fatal.exitCode == 3)
            #expect(fatal.message == "another lifeline daemon owns org.lifeline.Lifeline1 (pid \(getpid()))")
        }
    }
}
