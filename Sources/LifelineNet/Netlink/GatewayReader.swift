import CNetlink
import Glibc

/// Reads the default gateways of this network namespace once, on demand: a
/// route dump and, when asked for, a neighbour dump, on a fresh rtnetlink
/// socket that lives only as long as the call. The probe reads it after a
/// failed probe, `lifeline diagnose` for its gateway row. Blocking, bounded:
/// each reply is waited for at most a second, and a dump stops being read
/// after `byteLimit` bytes (a router's neighbour table can be large; an
/// answer cut short is an error, never a guess).
public enum GatewayReader {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public struct Reading: Sendable {
        /// IPv4 first, then IPv6; a family without a default route is absent.
        public var gateways: [DefaultGateway]
        /// Messages the parser dropped as malformed, one sentence each.
        public var problems: [String]
    }

    package static let byteLimit = 4 << 20

    public static func read(neighbours: Bool) throws(Failure) -> Reading {
        let socket: NetlinkSocket
        do { socket = try NetlinkSocket(groups: 0, nonBlocking: true) } catch { throw Failure(description: "\(error)") }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 8)
        defer { buffer.deallocate() }
        var messages: [NetlinkMessage] = []
        var problems: [String] = []
        for type in neighbours ? [LL_RTM_GETROUTE, LL_RTM_GETNEIGH] : [LL_RTM_GETROUTE] {
            // A dump the kernel marks interrupted (the table changed meanwhile)
            // may lack the very entry asked about: read it again.
            var attempt = 0
            while true {
                attempt += 1
                let dump = try self.dump(type, on: socket, buffer: buffer)
                problems += dump.problems
                if dump.complete || attempt == 3 {
                    messages += dump.messages
                    break
                }
            }
        }
        let gateways = DefaultGateway.pick(messages) { index in
            var name = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
            guard if_indextoname(UInt32(bitPattern: index), &name) != nil else { return nil }
            return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return Reading(gateways: gateways, problems: problems)
    }

    package static func dump(_ type: UInt16, on socket: NetlinkSocket, buffer: UnsafeMutableRawBufferPointer)
        throws(Failure) -> (messages: [NetlinkMessage], complete: Bool, problems: [String])
    {
        let what = type == LL_RTM_GETNEIGH ? "neighbour table" : "routing table"
        let sequence: UInt32
        do { sequence = try socket.requestDump(type: type) } catch { throw Failure(description: "\(error)") }
        var messages: [NetlinkMessage] = []
        var problems: [String] = []
        var complete = true
        var received = 0
        while true {
            guard socket.waitReadable(timeoutMs: 1000) else {
                throw Failure(description: "the kernel sent no \(what) within 1 s")
            }
            let count: Int
            do {
                switch try socket.receive(into: buffer) {
                case .wouldBlock, .foreign: continue
                case .overflow, .truncated:
                    complete = false
                    continue
                case .data(let n): count = n
                }
            } catch { throw Failure(description: "\(error)") }
            received += count
            guard received <= byteLimit else {
                throw Failure(description: "the \(what) is larger than \(byteLimit >> 20) MiB: not read")
            }
            let result = NetlinkParser.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            problems += result.problems.map { "\(what): \($0)" }
            for message in result.messages where message.header.sequence == sequence {
                if message.header.flags & LL_NLM_F_DUMP_INTR != 0 { complete = false }
                switch message.body {
                case .done: return (messages, complete, problems)
                case .error(let code) where code != 0:
                    throw Failure(description: "reading the \(what): \(String(cString: strerror(0 &- code)))")
                default: messages.append(message)
                }
            }
        }
    }
}
