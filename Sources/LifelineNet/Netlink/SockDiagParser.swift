import CNetlink

// The sock_diag wire format (`NETLINK_SOCK_DIAG`, what `ss -ti` reads) as typed
// values. Pure like `NetlinkParser`: bytes in, connections and problems out,
// every read bounds-checked through `Bytes`, so unit tests and the fuzzer drive
// it with crafted buffers. A `tcp_info` shorter than this kernel's (an older
// kernel's, or a crafted one) gives the fields it holds; the rest stay nil.

/// One TCP connection of the machine, with the kernel's own measurements of it.
package struct TCPConnection: Equatable, Sendable {
    /// 2 (IPv4) or 10 (IPv6).
    package var family: UInt8
    /// The kernel's TCP state (1 = established).
    package var state: UInt8
    /// 4 bytes for IPv4, 16 for IPv6.
    package var source: [UInt8]
    package var sourcePort: UInt16
    package var destination: [UInt8]
    package var destinationPort: UInt16
    /// The kernel's identity of the socket: the same connection in the next sample.
    package var cookie: UInt64
    package var info: TCPInfo?
}

/// The part of `struct tcp_info` the quality reading uses.
package struct TCPInfo: Equatable, Sendable {
    /// Smoothed round-trip time in µs (`tcpi_rtt`), as `ss` prints `rtt:`.
    package var rttMicros: UInt32
    package var rttVarianceMicros: UInt32
    /// Segments retransmitted and not yet acknowledged (`tcpi_retrans`).
    package var unackedRetransmits: UInt32
    /// Segments the kernel thinks are lost (`tcpi_lost`).
    package var lost: UInt32
    /// Every retransmission of the connection's life (`tcpi_total_retrans`), as `ss` prints after `retrans:N/`.
    package var totalRetransmits: UInt32
    /// Segments sent, retransmissions included (`tcpi_segs_out`); nil before Linux 4.2.
    package var segmentsOut: UInt32?
    package var segmentsIn: UInt32?
    /// Data segments sent (`tcpi_data_segs_out`); nil before Linux 4.6.
    package var dataSegmentsOut: UInt32?
    /// The lowest RTT seen, µs (`tcpi_min_rtt`); nil before Linux 4.6.
    package var minRttMicros: UInt32?

    package init(rttMicros: UInt32, rttVarianceMicros: UInt32 = 0, unackedRetransmits: UInt32 = 0, lost: UInt32 = 0,
                 totalRetransmits: UInt32 = 0, segmentsOut: UInt32? = nil, segmentsIn: UInt32? = nil,
                 dataSegmentsOut: UInt32? = nil, minRttMicros: UInt32? = nil) {
        self.rttMicros = rttMicros
        self.rttVarianceMicros = rttVarianceMicros
        self.unackedRetransmits = unackedRetransmits
        self.lost = lost
        self.totalRetransmits = totalRetransmits
        self.segmentsOut = segmentsOut
        self.segmentsIn = segmentsIn
        self.dataSegmentsOut = dataSegmentsOut
        self.minRttMicros = minRttMicros
    }
}

package enum SockDiagParser {
    package struct Result: Sendable {
        package var connections: [TCPConnection] = []
        /// `NLMSG_DONE` seen: the dump is complete.
        package var done = false
        /// A negative errno from `NLMSG_ERROR`.
        package var error: Int32?
        /// The kernel marked the dump interrupted (sockets came and went meanwhile): harmless here.
        package var interrupted = false
        package var problems: [NetlinkProblem] = []
    }

    /// The request for every established TCP socket of one family, with `tcp_info`:
    /// `struct inet_diag_req_v2` after the netlink header.
    package static func request(family: UInt8) -> [UInt8] {
        var body = [UInt8](repeating: 0, count: Int(LL_SIZEOF_INET_DIAG_REQ_V2))
        body[0] = family
        body[1] = LL_IPPROTO_TCP
        body[2] = UInt8(1 << (LL_INET_DIAG_INFO - 1))
        let states = UInt32(1) << UInt32(LL_TCP_ESTABLISHED)
        body.withUnsafeMutableBytes { $0.storeBytes(of: states, toByteOffset: 4, as: UInt32.self) }
        return body
    }

    /// Splits one datagram of a dump into connections; only messages with
    /// `sequence` count (nil: all). Malformed messages become problems; the
    /// well-formed ones around them are kept.
    package static func parse(_ buffer: UnsafeRawBufferPointer, sequence: UInt32? = nil) -> Result {
        var result = Result()
        let problems = NetlinkParser.forEachMessage(Bytes(buffer)) { header, offset, body in
            if let sequence, header.sequence != sequence { return }
            if header.flags & LL_NLM_F_DUMP_INTR != 0 { result.interrupted = true }
            switch header.type {
            case LL_NLMSG_DONE:
                result.done = true
            case LL_NLMSG_ERROR:
                if let code = body.i32(0), code != 0 { result.error = code }
            case LL_SOCK_DIAG_BY_FAMILY:
                do throws(Malformed) {
                    result.connections.append(try connection(body))
                } catch {
                    result.problems.append(.malformed(type: header.type, offset: offset, what: error.what))
                }
            default:
                break
            }
        }
        result.problems += problems
        return result
    }

    package static func parse(_ bytes: [UInt8], sequence: UInt32? = nil) -> Result {
        bytes.withUnsafeBytes { parse($0, sequence: sequence) }
    }

    typealias Malformed = NetlinkParser.Malformed

    // struct inet_diag_msg { u8 family, state, timer, retrans; struct inet_diag_sockid id;
    //   u32 expires, rqueue, wqueue, uid, inode; } then attributes.
    private static func connection(_ body: Bytes) throws(Malformed) -> TCPConnection {
        let fixed = Int(LL_SIZEOF_INET_DIAG_MSG)
        guard body.count >= fixed, let family = body.u8(0), let state = body.u8(1),
              let sport = body.u16(Int(LL_IDIAG_SPORT)), let dport = body.u16(Int(LL_IDIAG_DPORT)),
              let cookieLow = body.u32(Int(LL_IDIAG_COOKIE)), let cookieHigh = body.u32(Int(LL_IDIAG_COOKIE) + 4)
        else { throw Malformed(what: "sock_diag message shorter than inet_diag_msg (\(body.count) < \(fixed))") }
        let width: Int
        switch family {
        case 2: width = 4
        case 10: width = 16
        default: throw Malformed(what: "sock_diag message of family \(family)")
        }
        var connection = TCPConnection(
            family: family, state: state,
            source: body.slice(Int(LL_IDIAG_SRC), width).array(), sourcePort: sport.bigEndian,
            destination: body.slice(Int(LL_IDIAG_DST), width).array(), destinationPort: dport.bigEndian,
            cookie: UInt64(cookieHigh) << 32 | UInt64(cookieLow), info: nil
        )
        try NetlinkParser.forEachAttribute(body.slice(fixed, body.count - fixed)) { (kind, value) throws(Malformed) in
            if kind == LL_INET_DIAG_INFO { connection.info = try info(value) }
        }
        return connection
    }

    /// `struct tcp_info`, as long as the kernel sent it: the fields up to
    /// `tcpi_total_retrans` (Linux 2.6) are required, later ones are optional.
    private static func info(_ value: Bytes) throws(Malformed) -> TCPInfo {
        guard let rtt = value.u32(Int(LL_TCPI_RTT)), let rttVar = value.u32(Int(LL_TCPI_RTTVAR)),
              let retrans = value.u32(Int(LL_TCPI_RETRANS)), let lost = value.u32(Int(LL_TCPI_LOST)),
              let total = value.u32(Int(LL_TCPI_TOTAL_RETRANS))
        else { throw Malformed(what: "tcp_info of \(value.count) bytes") }
        return TCPInfo(rttMicros: rtt, rttVarianceMicros: rttVar, unackedRetransmits: retrans, lost: lost,
                       totalRetransmits: total, segmentsOut: value.u32(Int(LL_TCPI_SEGS_OUT)),
                       segmentsIn: value.u32(Int(LL_TCPI_SEGS_IN)),
                       dataSegmentsOut: value.u32(Int(LL_TCPI_DATA_SEGS_OUT)),
                       minRttMicros: value.u32(Int(LL_TCPI_MIN_RTT)))
    }
}
