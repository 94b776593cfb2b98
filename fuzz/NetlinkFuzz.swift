// libFuzzer entry for the rtnetlink parser and the route model it feeds
// (built by fuzz/netlink.sh with the parser sources, under ASan).
@_cdecl("LLVMFuzzerTestOneInput")
public func netlinkFuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    let result = NetlinkParser.parse(bytes)
    var table = RouteTable()
    for message in result.messages { table.apply(message) }
    var primary = table.primary()
    _ = table.offlineReason(previous: primary)
    // Re-read the interfaces default routes use from the same bytes (as after a filter change).
    table.refresh(table.nextHopIndexes, from: result.messages)
    primary = table.primary()
    _ = table.offlineReason(previous: primary)
    for problem in result.problems { _ = problem.description }
    // The default gateways and their neighbour entries, as after a failed probe.
    _ = DefaultGateway.pick(result.messages) { $0 > 0 && $0 < 8 ? "if\($0)" : nil }
    return 0
}
