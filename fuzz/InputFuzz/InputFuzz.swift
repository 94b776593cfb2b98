// Readers of text that other programs write, under libFuzzer (`fuzz/run.sh input`
// builds this with -sanitize=fuzzer and -DFUZZING): an exec monitor's output
// line, the event JSON that the log, the state file and `lifeline status`
// read back, and an HTTP reply as the probe's own client reads it off the
// network. Besides "never crashes", each reader's promise is checked:
// - an accepted exec line yields an interface and a reason that are bounded and
//   hold no control character (they go on to the toast, tmux and terminals);
// - an event read back and written again reads back to the same event, so
//   nothing the daemon wrote is changed by a round trip through a file;
// - every surface's formatter takes whatever a file held without trapping;
// - an HTTP reply keeps within the body, header and line limits, reads the
//   same whether its bytes come in one piece or two (where the cut falls is
//   the input's first byte; only the bytes quoted from a reply that is not
//   HTTP may differ), and a refusal is one line naming the problem.
//
// Built without -DFUZZING it replays files instead: `lifeline-fuzz-input FILE…`.
import ExecMonitor
import LifelineCore
import LifelineFormats
import LifelineNet

func fuzzInput(_ bytes: UnsafeRawBufferPointer) {
    let array = Array(bytes)
    let text = String(decoding: array, as: UTF8.self)
    checkExecLine(text)
    checkHTTPReply(array)
    _ = FlatJSON.parse(array)
    _ = StateRecord.parse(array)
    if let (event, _) = StateRecord.parseEvent(array) {
        checkRoundTrip(event)
        checkSurfaces(event)
    }
}

private func checkExecLine(_ line: String) {
    for role in [ExecMonitor.Config.Role.link, .reachability] {
        guard case .success(let o) = ExecLine.parse(line, role: role) else { continue }
        guard o.interface.utf8.count <= ExecLine.maxInterfaceLength,
              o.reason.utf8.count <= ExecLine.maxReasonLength
        else { fatalError("exec line accepted with an oversized field: \(o)") }
        guard !(o.interface + o.reason).unicodeScalars.contains(where: TerminalText.isControl) else {
            fatalError("exec line accepted with a control character: \(o)")
        }
    }
}

private func checkHTTPReply(_ bytes: [UInt8]) {
    func readAll(_ pieces: [ArraySlice<UInt8>]) -> PlainHTTPReplyReader {
        var reader = PlainHTTPReplyReader(host: "check.example")
        var step = PlainHTTPReplyReader.Step.more
        for piece in pieces where step == .more { step = reader.read(piece) }
        if step == .more { _ = reader.end() }
        return reader
    }
    let whole = readAll([bytes[...]])
    guard whole.body.count <= PlainHTTPReplyReader.bodyLimit, whole.headers.count <= PlainHTTPReplyReader.headerLimit,
          // A byte that is not UTF-8 becomes U+FFFD: three bytes.
          whole.headers.allSatisfy({ $0.utf8.count <= 3 * PlainHTTPReplyReader.lineLimit })
    else { fatalError("an HTTP reply read past a limit: body \(whole.body.count), \(whole.headers.count) headers") }
    let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    let split = readAll([bytes[..<cut], bytes[cut...]])
    guard PlainHTTPReplyReader.sameOutcome(split.step, whole.step), split.status == whole.status, split.headers == whole.headers,
          split.body == whole.body, split.truncated == whole.truncated
    else { fatalError("an HTTP reply read differently when cut at \(cut): \(whole.step) / \(split.step)") }
    if case .failed(let why) = whole.step {
        guard why.hasPrefix("check.example "), !why.unicodeScalars.contains(where: TerminalText.isControl) else {
            fatalError("an HTTP refusal that does not name the host on one clean line: \(why)")
        }
    }
}

private func checkRoundTrip(_ event: StateEvent) {
    let written = JSONText.object(event)
    guard let (again, _) = StateRecord.parseEvent(Array(written.utf8)) else {
        fatalError("an event read from a file cannot be read back once written:\n\(written)")
    }
    guard again == event else {
        fatalError("an event changed on a round trip:\n\(event)\n\(again)")
    }
}

private func checkSurfaces(_ event: StateEvent) {
    let now = event.since &+ 1_000_000
    _ = StatusFormat.render("{icon} {state} {interface} {kind} {rtt_ms} {since} {duration} {reason}", event, now: now)
    _ = StatusFormat.plainLine(event, now: now)
    for name in WatchFormat.names {
        _ = WatchFormat(argument: name)?.line(event, now: now)
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func inputFuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzInput(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}
#else
import FuzzReplay

@main
struct ReplayInputs {
    static func main() { replayFiles(fuzzInput) }
}
#endif
