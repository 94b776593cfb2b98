// The plain build of a fuzz target (no -DFUZZING, no libFuzzer) replays files
// through the same check: `lifeline-fuzz-<name> FILE…`, to reproduce a crash
// the fuzzer wrote, or to run the committed seeds in a test.
import Glibc

/// Reads each file named on the command line and hands its bytes to `check`;
/// prints "PATH: ok" after each, and exits 1 on a file it cannot open.
public func replayFiles(_ check: (UnsafeRawBufferPointer) -> Void) {
    for path in CommandLine.arguments.dropFirst() {
        guard let file = fopen(path, "rb") else {
            print("\(path): cannot open")
            exit(1)
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&chunk, 1, chunk.count, file)
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        fclose(file)
        bytes.withUnsafeBytes { check($0) }
        print("\(path): ok")
    }
}
