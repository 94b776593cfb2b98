import CNetlink
import Glibc
import LifelineNet

/// The classic-BPF socket filter of the event socket: the kernel drops, before
/// waking the reader, every message that cannot change the decision. That is
/// what makes docker/veth churn nearly free: 1000 veth pairs are ~20k
/// messages, and without the filter each burst costs a wake-up.
///
/// Kept: route messages for main-table routes of up to `broadestSplit` prefix
/// bits (`rtm_table` 254): default routes, and the broad routes a VPN adds
/// in pairs to take the internet's traffic without replacing the default
/// (OpenVPN's `redirect-gateway def1` and WireGuard's `0.0.0.0/1`, `128.0.0.0/1`
/// are /1; the IPv6 ones are /1 to /4); link and address messages for the `watched` interfaces
/// (those that carry, or carried, a default route, and a tunnel policy rules
/// send the traffic into); anything else (rule changes, errors).
/// Dropped: other routes (link-local, multicast, local table) and link or
/// address messages of other interfaces. Their state is re-read from the
/// kernel when a default route starts to use them (`NetlinkLoop.syncWatched`).
///
/// rtnetlink notifications carry one message per datagram, so checking the
/// first header is checking them all. BPF loads are big-endian: constants
/// compared with host-order fields are converted with `.bigEndian`.
enum EventFilter {
    struct Instruction: Equatable, Sendable {
        var code: UInt16
        var jt: UInt8
        var jf: UInt8
        var k: UInt32
    }

    static let accept: UInt32 = 0xFFFF_FFFF
    static let drop: UInt32 = 0
    /// Conditional jumps reach at most 255 instructions ahead; with more
    /// watched interfaces link and address messages all pass.
    static let maxWatched = 200
    /// The longest prefix of a main-table route that can still steer the
    /// internet's traffic into a tunnel.
    static let broadestSplit: UInt32 = 7

    /// Offsets: nlmsghdr is 16 bytes; nlmsg_type at 4; rtm_dst_len at 16+1,
    /// rtm_table at 16+4; ifi_index and ifa_index both at 16+4.
    static func program(watching watched: Set<Int32>) -> [Instruction] {
        let indexes = watched.sorted()
        let checkIndexes = indexes.count <= maxWatched
        let indexChecks = checkIndexes ? indexes.count + 1 : 1  // ld + jeq per index, or a plain accept
        // Layout: 0 ldh type; 1-6 type tests; 7 ret accept; 8-11 route; 12… index; then ACCEPT, DROP.
        let routeAt = 8, indexAt = 12
        let acceptAt = indexAt + indexChecks + (checkIndexes ? 1 : 0)
        let dropAt = acceptAt + 1
        func jeq(_ pc: Int, _ value: UInt32, to target: Int, else other: Int? = nil) -> Instruction {
            Instruction(code: LL_BPF_JEQ_K, jt: UInt8(target - pc - 1), jf: UInt8((other ?? pc + 1) - pc - 1), k: value)
        }
        func type(_ t: UInt16) -> UInt32 { UInt32(t.bigEndian) }
        var p: [Instruction] = [
            Instruction(code: LL_BPF_LD_H_ABS, jt: 0, jf: 0, k: 4),
            jeq(1, type(LL_RTM_NEWROUTE), to: routeAt),
            jeq(2, type(LL_RTM_DELROUTE), to: routeAt),
            jeq(3, type(LL_RTM_NEWLINK), to: indexAt),
            jeq(4, type(LL_RTM_DELLINK), to: indexAt),
            jeq(5, type(LL_RTM_NEWADDR), to: indexAt),
            jeq(6, type(LL_RTM_DELADDR), to: indexAt),
            Instruction(code: LL_BPF_RET_K, jt: 0, jf: 0, k: accept),
            Instruction(code: LL_BPF_LD_B_ABS, jt: 0, jf: 0, k: 17),
            Instruction(code: LL_BPF_JGT_K, jt: UInt8(dropAt - 9 - 1), jf: 0, k: broadestSplit),
            Instruction(code: LL_BPF_LD_B_ABS, jt: 0, jf: 0, k: 20),
            jeq(11, UInt32(LL_RT_TABLE_MAIN), to: acceptAt, else: dropAt),
        ]
        if checkIndexes {
            p.append(Instruction(code: LL_BPF_LD_W_ABS, jt: 0, jf: 0, k: 20))
            for index in indexes {
                p.append(jeq(p.count, UInt32(bitPattern: index).bigEndian, to: acceptAt))
            }
            p.append(Instruction(code: LL_BPF_RET_K, jt: 0, jf: 0, k: drop))
        } else {
            p.append(Instruction(code: LL_BPF_RET_K, jt: 0, jf: 0, k: accept))
        }
        p.append(Instruction(code: LL_BPF_RET_K, jt: 0, jf: 0, k: accept))
        p.append(Instruction(code: LL_BPF_RET_K, jt: 0, jf: 0, k: drop))
        assert(p.count == dropAt + 1)
        return p
    }
}

extension NetlinkSocket {
    /// Replaces the socket's filter (atomically, in the kernel).
    func attach(_ program: [EventFilter.Instruction]) throws(Failure) {
        var filter = program.map { sock_filter(code: $0.code, jt: $0.jt, jf: $0.jf, k: $0.k) }
        let rc = filter.withUnsafeMutableBufferPointer { ll_attach_filter(fd, $0.baseAddress, UInt16($0.count)) }
        guard rc == 0 else { throw Failure(operation: "SO_ATTACH_FILTER", errno: errno) }
    }
}
