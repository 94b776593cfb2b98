import CNetlink
import Testing
@testable import LifelineNet

/// The sock_diag parser on crafted bytes: what the kernel sends, and what it
/// never should (short, overlong, nested garbage), which is dropped, not read.
@Suite struct SockDiagParserTests {
    /// One `SOCK_DIAG_BY_FAMILY` message: inet_diag_msg, then an `INET_DIAG_INFO` attribute of `infoLength` bytes.
    static func message(family: UInt8 = 2, source: [UInt8] = [192, 0, 2, 10], sport: UInt16 = 40000,
                        destination: [UInt8] = [198, 51, 100, 7], dport: UInt16 = 443, cookie: UInt64 = 0x1_0000_0002,
                        rtt: UInt32 = 23_500, totalRetrans: UInt32 = 7, segsOut: UInt32 = 1000, dataSegsOut: UInt32 = 900,
                        infoLength: Int = 232, sequence: UInt32 = 1, type: UInt16 = LL_SOCK_DIAG_BY_FAMILY) -> [UInt8] {
        var body = [UInt8](repeating: 0, count: Int(LL_SIZEOF_INET_DIAG_MSG))
        body[0] = family
        body[1] = 1
        func put<T: FixedWidthInteger>(_ v: T, _ at: Int, into b: inout [UInt8]) {
            b.withUnsafeMutableBytes { $0.storeBytes(of: v, toByteOffset: at, as: T.self) }
        }
        put(sport.bigEndian, Int(LL_IDIAG_SPORT), into: &body)
        put(dport.bigEndian, Int(LL_IDIAG_DPORT), into: &body)
        for (i, b) in source.enumerated() { body[Int(LL_IDIAG_SRC) + i] = b }
        for (i, b) in destination.enumerated() { body[Int(LL_IDIAG_DST) + i] = b }
        put(UInt32(cookie & 0xFFFF_FFFF), Int(LL_IDIAG_COOKIE), into: &body)
        put(UInt32(cookie >> 32), Int(LL_IDIAG_COOKIE) + 4, into: &body)
        var info = [UInt8](repeating: 0, count: 232)
        put(rtt, Int(LL_TCPI_RTT), into: &info)
        put(UInt32(3), Int(LL_TCPI_LOST), into: &info)
        put(totalRetrans, Int(LL_TCPI_TOTAL_RETRANS), into: &info)
        put(segsOut, Int(LL_TCPI_SEGS_OUT), into: &info)
        put(dataSegsOut, Int(LL_TCPI_DATA_SEGS_OUT), into: &info)
        info = Array(info.prefix(infoLength))
        var attribute: [UInt8] = [0, 0, 0, 0] + info
        put(UInt16(4 + info.count), 0, into: &attribute)
        put(LL_INET_DIAG_INFO, 2, into: &attribute)
        while attribute.count % 4 != 0 { attribute.append(0) }
        body += attribute
        var header = [UInt8](repeating: 0, count: 16)
        put(UInt32(16 + body.count), 0, into: &header)
        put(type, 4, into: &header)
        put(LL_NLM_F_MULTI, 6, into: &header)
        put(sequence, 8, into: &header)
        return header + body
    }

    static func done(sequence: UInt32 = 1) -> [UInt8] {
        var m = [UInt8](repeating: 0, count: 20)
        m.withUnsafeMutableBytes {
            $0.storeBytes(of: UInt32(20), toByteOffset: 0, as: UInt32.self)
            $0.storeBytes(of: LL_NLMSG_DONE, toByteOffset: 4, as: UInt16.self)
            $0.storeBytes(of: sequence, toByteOffset: 8, as: UInt32.self)
        }
        return m
    }

    @Test func wireLayoutMatchesTheKernel() {
        #expect(LL_SIZEOF_INET_DIAG_REQ_V2 == 56)
        #expect(LL_SIZEOF_INET_DIAG_MSG == 72)
        #expect(LL_TCPI_RTT == 68 && LL_TCPI_TOTAL_RETRANS == 100)
        let request = SockDiagParser.request(family: 10)
        #expect(request.count == 56 && request[0] == 10 && request[1] == 6 && request[2] == 2)
        #expect(request[4] == 2)  // 1 << TCP_ESTABLISHED
    }

    @Test func parsesAConnectionWithItsTCPInfo() {
        let r = SockDiagParser.parse(Self.message() + Self.done(), sequence: 1)
        #expect(r.problems.isEmpty && r.done && r.error == nil)
        #expect(r.connections == [TCPConnection(
            family: 2, state: 1, source: [192, 0, 2, 10], sourcePort: 40000, destination: [198, 51, 100, 7],
            destinationPort: 443, cookie: 0x1_0000_0002,
            info: TCPInfo(rttMicros: 23_500, lost: 3, totalRetransmits: 7, segmentsOut: 1000, segmentsIn: 0, dataSegmentsOut: 900,
                         minRttMicros: 0)
        )])
    }

    @Test func anOlderKernelsShorterTCPInfoGivesTheFieldsItHolds() {
        let r = SockDiagParser.parse(Self.message(infoLength: 104))
        #expect(r.problems.isEmpty)
        #expect(r.connections.first?.info?.totalRetransmits == 7)
        #expect(r.connections.first?.info?.segmentsOut == nil)
    }

    @Test func aTCPInfoTooShortForItsCoreFieldsDropsThatMessageOnly() {
        let r = SockDiagParser.parse(Self.message(infoLength: 40, sequence: 1) + Self.message(cookie: 9) + Self.done())
        #expect(r.problems.count == 1)
        #expect(r.connections.map(\.cookie) == [9])
        #expect(r.done)
    }

    @Test func otherSequencesAndFamiliesAreNotRead() {
        let r = SockDiagParser.parse(Self.message(sequence: 5) + Self.message(family: 7), sequence: 1)
        #expect(r.connections.isEmpty)
        #expect(r.problems.count == 1)  // family 7
    }

    @Test func ipv6AddressesKeepAllSixteenBytes() {
        let source: [UInt8] = [0x20, 0x01, 0x0d, 0xb8] + [UInt8](repeating: 0, count: 11) + [1]
        let r = SockDiagParser.parse(Self.message(family: 10, source: source, destination: source.reversed()))
        #expect(r.connections.first?.source == source)
        #expect(r.connections.first?.destination.count == 16)
    }

    @Test func lengthsThatLieAreProblemsNotReads() {
        var lying = Self.message()
        lying.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(10_000), toByteOffset: 0, as: UInt32.self) }
        #expect(SockDiagParser.parse(lying).problems.count == 1)
        var badAttribute = Self.message()
        let at = 16 + Int(LL_SIZEOF_INET_DIAG_MSG)
        badAttribute.withUnsafeMutableBytes { $0.storeBytes(of: UInt16(60_000), toByteOffset: at, as: UInt16.self) }
        let r = SockDiagParser.parse(badAttribute)
        #expect(r.connections.isEmpty && r.problems.count == 1)
        #expect(SockDiagParser.parse(Array(Self.message().prefix(50))).connections.isEmpty)
        #expect(SockDiagParser.parse([1, 2, 3]).problems == [.trailingBytes(3)])
    }

    @Test func anErrorReplyIsReported() {
        var m = Self.done()
        m.withUnsafeMutableBytes {
            $0.storeBytes(of: LL_NLMSG_ERROR, toByteOffset: 4, as: UInt16.self)
            $0.storeBytes(of: Int32(-13), toByteOffset: 16, as: Int32.self)
        }
        #expect(SockDiagParser.parse(m).error == -13)
    }

    @Test func randomBytesNeverCrashTheParser() {
        var generator = SystemRandomNumberGenerator()
        let valid = Self.message() + Self.done()
        for _ in 0..<2000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator)))
            _ = SockDiagParser.parse(bytes)
        }
    }

    // MARK: Which connections are the primary interface's

    static func address(_ index: Int32, _ bytes: [UInt8], _ prefix: UInt8) -> AddressMessage {
        AddressMessage(family: bytes.count == 4 ? 2 : 10, prefixLength: prefix, index: index, address: bytes)
    }

    static func connection(from source: [UInt8], to destination: [UInt8]) -> TCPConnection {
        TCPConnection(family: source.count == 4 ? 2 : 10, state: 1, source: source, sourcePort: 1, destination: destination,
                      destinationPort: 2, cookie: 1, info: nil)
    }

    @Test func onlyTrafficLeavingThroughThePrimaryInterfaceCounts() {
        let traffic = PrimaryTraffic(addresses: [
            Self.address(1, [127, 0, 0, 1], 8),
            Self.address(2, [192, 168, 1, 20], 24),
            Self.address(3, [10, 8, 0, 2], 24),  // a second interface (docker, a VPN not carrying the default route)
        ], primary: 2)
        let me: [UInt8] = [192, 168, 1, 20]
        #expect(traffic.carries(Self.connection(from: me, to: [93, 184, 216, 34])))
        #expect(!traffic.carries(Self.connection(from: me, to: [192, 168, 1, 1])))  // the local subnet
        #expect(!traffic.carries(Self.connection(from: me, to: [10, 8, 0, 5])))  // another interface's subnet
        #expect(!traffic.carries(Self.connection(from: [127, 0, 0, 1], to: [127, 0, 0, 1])))
        #expect(!traffic.carries(Self.connection(from: [10, 8, 0, 2], to: [93, 184, 216, 34])))  // leaves elsewhere
        #expect(!traffic.carries(Self.connection(from: me, to: [169, 254, 1, 1])))
        let mapped = [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF]
        #expect(traffic.carries(Self.connection(from: mapped + me, to: mapped + [93, 184, 216, 34])))
        #expect(!traffic.carries(Self.connection(from: mapped + me, to: mapped + [192, 168, 1, 9])))
    }

    @Test func subnetPrefixesAreComparedBitByBit() {
        #expect(PrimaryTraffic.within([10, 0, 0, 130], [10, 0, 0, 129], prefix: 25))
        #expect(!PrimaryTraffic.within([10, 0, 0, 127], [10, 0, 0, 129], prefix: 25))
        #expect(PrimaryTraffic.within([1, 2, 3, 4], [9, 9, 9, 9], prefix: 0))
        #expect(!PrimaryTraffic.within([1, 2, 3, 4], [1, 2, 3, 4] + [UInt8](repeating: 0, count: 12), prefix: 8))
    }
}
