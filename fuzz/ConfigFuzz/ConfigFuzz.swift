// The config loader after the parse, under libFuzzer (`fuzz/run.sh config` builds this
// with -sanitize=fuzzer and -DFUZZING). The TOML parser itself runs in a child
// process in the daemon, because it aborts on some input by design; what runs in
// the daemon is everything below: the reader of the child's answer (untrusted
// bytes), the plain value tree → typed config path for every plugin kind, the
// source locator on the raw text, and `config show`'s printer.
//
// Built without -DFUZZING it replays files instead: `lifeline-fuzz-config FILE…`.
import LifelineConfig
import LifelineDaemon
import LifelineTOML

/// One input: a child's answer (`ConfigWire`), also read as the file's text.
func fuzzConfig(_ bytes: UnsafeRawBufferPointer) {
    let text = String(decoding: bytes, as: UTF8.self)
    _ = SourceLocator(text: text).line(of: ["sink", "0", "kind"])
    guard case .table(let table)? = try? ConfigWire.read(bytes) else { return }
    guard let config = try? ConfigLoader.load(table: table, text: text, file: "fuzz.toml") else { return }
    // What `config show` prints must load again, to the same configuration.
    guard let shown = try? ConfigPrinter.toml(config) else { fatalError("config show failed on a loaded config") }
    let again: DaemonConfig
    do {
        again = try ConfigLoader.load(text: shown, file: "shown.toml", parser: .inProcess)
    } catch {
        fatalError("config show printed what the loader refuses: \(error)\n\(shown)")
    }
    guard let reshown = try? ConfigPrinter.toml(again),
          reshown.split(separator: "\n").dropFirst() == shown.split(separator: "\n").dropFirst()
    else {
        fatalError("config show does not round-trip:\n\(shown)")
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func configFuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzConfig(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}
#else
import FuzzReplay

@main
struct ReplayConfigInputs {
    static func main() { replayFiles(fuzzConfig) }
}
#endif
