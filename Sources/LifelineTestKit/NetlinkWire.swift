// Hand-built rtnetlink messages for the parser and route-table tests, in host
// byte order like the kernel's. Layouts: nlmsghdr 16, ifinfomsg 16,
// ifaddrmsg 8, rtmsg 12, rtattr 4, rtnexthop 8.
public enum NetlinkWire {
    public static let newLink: UInt16 = 16, delLink: UInt16 = 17
    public static let newAddr: UInt16 = 20, delAddr: UInt16 = 21
    public static let newRoute: UInt16 = 24, delRoute: UInt16 = 25
    public static let done: UInt16 = 3, error: UInt16 = 2
    public static let replace: UInt16 = 0x100
    public static let up: UInt32 = 0x1, running: UInt32 = 0x40, loopback: UInt32 = 0x8, lowerUp: UInt32 = 0x10000
    public static let usable = up | running | lowerUp

    public static func u16(_ v: UInt16) -> [UInt8] { withUnsafeBytes(of: v) { Array($0) } }
    public static func u32(_ v: UInt32) -> [UInt8] { withUnsafeBytes(of: v) { Array($0) } }
    public static func i32(_ v: Int32) -> [UInt8] { withUnsafeBytes(of: v) { Array($0) } }
    public static func pad(_ b: [UInt8]) -> [UInt8] { b + [UInt8](repeating: 0, count: (4 - b.count % 4) % 4) }

    public static func attr(_ type: UInt16, _ payload: [UInt8]) -> [UInt8] {
        pad(u16(UInt16(4 + payload.count)) + u16(type) + payload)
    }

    public static func message(_ type: UInt16, flags: UInt16 = 0, seq: UInt32 = 0, _ body: [UInt8]) -> [UInt8] {
        pad(u32(UInt32(16 + body.count)) + u16(type) + u16(flags) + u32(seq) + u32(0) + body)
    }

    public static func link(_ type: UInt16 = newLink, index: Int32, flags: UInt32, name: String?,
                     hardware: UInt16 = 1, infoKind: String? = nil) -> [UInt8] {
        var body: [UInt8] = [0, 0] + u16(hardware) + i32(index) + u32(flags) + u32(0)
        if let name { body += attr(3, Array(name.utf8) + [0]) }
        if let infoKind { body += attr(18, attr(1, Array(infoKind.utf8) + [0])) }
        return message(type, body)
    }

    public static func address(_ type: UInt16 = newAddr, family: UInt8 = 2, prefix: UInt8, index: Int32, _ address: [UInt8]) -> [UInt8] {
        let body: [UInt8] = [family, prefix, 0, 0] + u32(UInt32(index)) + attr(2, address) + attr(1, address)
        return message(type, body)
    }

    public static func route(_ type: UInt16 = newRoute, flags: UInt16 = 0, family: UInt8 = 2, dstLength: UInt8 = 0,
                      table: UInt8 = 254, routeType: UInt8 = 1, priority: UInt32? = nil, oif: Int32? = nil,
                      gateway: [UInt8]? = nil, multipath: [(Int32, [UInt8])]? = nil, destination: [UInt8]? = nil,
                      tableAttribute: UInt32? = nil) -> [UInt8] {
        var body: [UInt8] = [family, dstLength, 0, 0, table, 3, 0, routeType] + u32(0)
        if let destination { body += attr(1, destination) }
        if let tableAttribute { body += attr(15, u32(tableAttribute)) }
        if let priority { body += attr(6, u32(priority)) }
        if let oif { body += attr(4, i32(oif)) }
        if let gateway { body += attr(5, gateway) }
        if let multipath {
            var hops: [UInt8] = []
            for (index, gw) in multipath {
                let inner = attr(5, gw)
                hops += u16(UInt16(8 + inner.count)) + [0, 0] + i32(index) + inner
            }
            body += attr(9, hops)
        }
        return message(type, flags: flags, body)
    }

    public static let gw4: [UInt8] = [10, 77, 0, 1]
    public static let gw4b: [UInt8] = [10, 78, 0, 1]
    public static let gw6: [UInt8] = [0xfd, 0x77] + [UInt8](repeating: 0, count: 13) + [1]
}
