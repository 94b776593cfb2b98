import Foundation
import LifelineDBus
import LifelineServices

/// `lifeline-bench call MEMBER [--count N]`: round trips of a no-argument method
/// of the daemon's D-Bus interface (`GetStatus`, `Check`) on the session bus in
/// the environment, from one client connection. bench/notify-hang.sh uses it
/// to time the service while a notification server hangs.
enum CallBench {
    static func run(_ args: [String]) async {
        guard let member = args.first, ["GetStatus", "Check"].contains(member) else {
            print("usage: lifeline-bench call GetStatus|Check [--count N]")
            exit(2)
        }
        let count = args.firstIndex(of: "--count").flatMap { Int(args[$0 + 1]) } ?? 200
        let client: BusConnection
        do {
            client = try BusConnection.connect(.session)
        } catch {
            print("no session bus: \(error)")
            exit(1)
        }
        var samples: [Double] = []
        for _ in 0..<count {
            do {
                let m = try BusMessage.methodCall(destination: Lifeline1.busName, path: Lifeline1.objectPath,
                                                  interface: Lifeline1.interfaceName, member: member)
                let start = ContinuousClock.now
                _ = try client.callBlocking(m, timeout: .seconds(30))
                samples.append(DBusBench.ms(start.duration(to: .now)))
            } catch {
                print("\(member) failed: \(error)")
                exit(1)
            }
        }
        DBusBench.report("\(member)() round trip", samples)
    }
}
