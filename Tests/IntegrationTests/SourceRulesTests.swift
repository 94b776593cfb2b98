import Foundation
import Testing

/// Rules of the code that no compiler enforces, checked over the sources.
@Suite struct SourceRulesTests {
    /// glibc's socket types and message flags (`SOCK_STREAM`, `MSG_NOSIGNAL`, …)
    /// are named through `SocketConstants`, never directly: Swift credits those
    /// enum constants to whichever C module included their header first, so a
    /// direct use built on one machine and failed on a newcomer's clean build
    /// ("cannot find 'SOCK_STREAM' in scope").
    @Test func socketConstantsComeFromTheirOneOwner() throws {
        let pattern = try Regex(#"(^|[^.\w])(SOCK|MSG)_[A-Z]+\b"#)
        let files = try Harness.run(["git", "-C", PackagingTests.repo.path, "ls-files", "*.swift"]).stdout
            .split(separator: "\n").map(String.init)
        #expect(files.count > 100, "git ls-files found \(files.count) Swift files")
        var direct: [String] = []
        for file in files where file != "Sources/LifelinePlatform/SocketConstants.swift" {
            let text = try String(contentsOf: PackagingTests.repo.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.firstRange(of: "//").map { line[..<$0.lowerBound] } ?? line[...]
                // Python in a test's string (`socket.SOCK_DGRAM`) does not match: a dot comes before it.
                if code.contains(pattern) { direct.append("\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))") }
            }
        }
        #expect(direct.isEmpty, "use SocketConstants:\n\(direct.joined(separator: "\n"))")
    }
}
