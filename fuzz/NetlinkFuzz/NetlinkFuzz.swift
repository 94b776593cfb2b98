// The rtnetlink parser and the route model it feeds, the Router Advertisement
// options it passes on (a network's captive-portal announcement, RFC 8910),
// and the sock_diag reader, under libFuzzer (`fuzz/run.sh netlink` builds this with
// -sanitize=fuzzer and -DFUZZING). Besides "never crashes": an announcement is
// only ever taken as an https:// URL within the length limit, and a refusal's
// reason stays one bounded line (it goes to `diagnose` and the log).
//
// Built without -DFUZZING it replays files instead: `lifeline-fuzz-netlink FILE…`.
import LifelineNet

func fuzzNetlink(_ bytes: UnsafeRawBufferPointer) {
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
    for message in result.messages {
        if case .ndUserOption(let option) = message.body { checkAnnouncement(option.captivePortal) }
    }
    // The same bytes as a sock_diag answer (the quality reading's input).
    let diag = SockDiagParser.parse(bytes)
    for problem in diag.problems { _ = problem.description }
}

private func checkAnnouncement(_ announcement: CaptivePortalOption?) {
    switch announcement {
    case .api(let url)?:
        precondition(CaptivePortalOption.isHTTPS(url), "took an announcement that is not https://: \(url)")
        precondition(url.utf8.count <= CaptivePortalOption.maxLength, "took an announcement past the length limit")
    case .refused(let reason)?:
        precondition(reason.utf8.count <= 200 && !reason.contains("\n"), "a refusal's reason is not one short line")
    case .unrestricted?, nil:
        break
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func netlinkFuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzNetlink(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}
#else
import FuzzReplay

@main
struct ReplayNetlinkInputs {
    static func main() { replayFiles(fuzzNetlink) }
}
#endif
