import Glibc
import LifelineCore

/// The parent's side of `TOMLParser.isolated`: runs the parsing child, reads its
/// answer, and turns every way it can fail into a `ConfigError` naming the file.
package struct IsolatedParse {
    /// Config files are read up to this size; text beyond it is refused unseen.
    package static let inputLimit = 4 << 20

    let executable: String
    let arguments: [String]
    /// A parse takes milliseconds; this only stops a child that hangs.
    let timeout: Duration

    func parse(_ text: String, file: String) throws(ConfigError) -> ConfigTable {
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.inputLimit else {
            throw ConfigError(file: file, line: nil, key: nil, message: "is larger than \(Self.inputLimit >> 20) MiB")
        }
        let result: ChildProcess.Result
        do {
            result = try run(bytes, timeout: timeout)
        } catch {
            throw ConfigError(file: file, line: nil, key: nil, message: "the TOML parser could not start: \(error)")
        }
        if result.timedOut {
            throw ConfigError(file: file, line: nil, key: nil, message: "the TOML parser did not finish within \(DurationText.format(timeout))")
        }
        if result.outputTooLarge {
            throw ConfigError(file: file, line: nil, key: nil, message: "the TOML parser's answer is too large")
        }
        if let signal = result.signal {
            // Parse ever shorter beginnings of the file to find the line it fails on.
            let line = crashingLine(of: text)
            throw ConfigError(
                file: file, line: line, key: nil,
                message: "the TOML parser failed on this \(line == nil ? "file" : "line") (it was stopped by signal \(signal), "
                    + "\(String(cString: strsignal(signal)))); look for a bracket, quote or character out of place")
        }
        guard result.exitCode == 0 else {
            let why = result.errorText.split(separator: "\n").last.map { ": " + $0.prefix(200) } ?? ""
            throw ConfigError(file: file, line: nil, key: nil,
                              message: "the TOML parser could not run (exit status \(result.exitCode ?? -1))\(why)")
        }
        let outcome: ConfigWire.Outcome
        do {
            outcome = try ConfigWire.read(result.output)
        } catch {
            throw ConfigError(file: file, line: nil, key: nil, message: "the TOML parser's answer is unreadable: \(error)")
        }
        switch outcome {
        case .table(let table): return table
        case .syntaxError(let line, let message): throw ConfigError(file: file, line: line, key: nil, message: message)
        }
    }

    private func run(_ input: [UInt8], timeout: Duration) throws(ChildProcess.Failure) -> ChildProcess.Result {
        try ChildProcess.run(executable: executable, arguments: arguments, input: input,
                             outputLimit: 16 * input.count + 4096, timeout: timeout)
    }

    /// The first line whose inclusion makes the parser crash, by bisection over
    /// the file's beginnings; nil when that cannot be told.
    func crashingLine(of text: String) -> Int? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        if lines.count <= 1 { return 1 }
        func crashes(_ count: Int) -> Bool? {
            let prefix = lines[0..<count].joined(separator: "\n") + "\n"
            guard let r = try? run(Array(prefix.utf8), timeout: min(timeout, .seconds(1))), !r.timedOut, !r.outputTooLarge else { return nil }
            return r.signal != nil
        }
        // Invariant: the first `high` lines crash; the first `low - 1` do not.
        var low = 1
        var high = lines.count
        while low < high {
            let middle = (low + high) / 2
            guard let crashed = crashes(middle) else { return nil }
            if crashed { high = middle } else { low = middle + 1 }
        }
        return high
    }
}
