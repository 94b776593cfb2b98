// Reading D-Bus messages as the daemon reads a stranger's, under libFuzzer
// (`fuzz/run.sh dbus` builds this with -sanitize=fuzzer and -DFUZZING):
// the bytes are demarshalled as libdbus reads a message off the socket, the
// header is checked as every handler checks it, and the arguments are read
// within the daemon's bounds, then within tight ones. Neither may crash, and
// no reading may exceed its bounds.
//
// Built without -DFUZZING it replays files instead: `lifeline-fuzz-dbus FILE…`.
import LifelineDBus

func fuzzDBus(_ buffer: UnsafeRawBufferPointer) {
    guard let message = try? BusMessage.demarshal(Array(buffer)) else { return }
    _ = (message.kind, message.path, message.interface, message.member, message.sender, message.signature)
    _ = message.is(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged", signature: "sa{sv}as")
    _ = message.is(interface: "org.freedesktop.login1.Manager", member: "PrepareForSleep", signature: "b",
                   path: "/org/freedesktop/login1")
    if let values = try? message.arguments() {
        precondition(count(values) <= ArgumentBounds.standard.values, "read past the value bound")
        for value in values { _ = (value.signature, value.vardictEntries, value.string, value.variant) }
    }
    let tight = ArgumentBounds(values: 8, depth: 2, bytes: 64)
    if let values = try? message.arguments(within: tight) {
        precondition(count(values) <= tight.values, "read past a tight value bound")
        precondition(depth(values) <= tight.depth, "read past a tight depth bound")
    }
    _ = message.asError
}

private func children(_ value: BusValue) -> [BusValue] {
    switch value {
    case .variant(let inner): [inner]
    case .array(_, let items): items
    case .structure(let fields): fields
    case .dictionary(_, _, let entries): entries.flatMap { [$0.key, $0.value] }
    default: []
    }
}

private func count(_ values: [BusValue]) -> Int {
    values.reduce(0) { $0 + 1 + count(children($1)) }
}

private func depth(_ values: [BusValue]) -> Int {
    values.map { isContainer($0) ? 1 + depth(children($0)) : 0 }.max() ?? 0
}

private func isContainer(_ value: BusValue) -> Bool {
    switch value {
    case .variant, .array, .structure, .dictionary: true
    default: false
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func dbusFuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzDBus(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}
#else
import FuzzReplay

@main
struct ReplayDBusInputs {
    static func main() { replayFiles(fuzzDBus) }
}
#endif
