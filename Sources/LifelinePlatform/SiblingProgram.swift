import Glibc

/// How Lifeline's programs find one another: `lifeline` (the front binary),
/// `lifeline-cli` (the full CLI, and the child that parses TOML) and
/// `lifeline-daemon` sit in one folder (the build folder), or the front binary in
/// bin/ and the others in ../libexec/lifeline/ (an installed system).
public enum SiblingProgram {
    /// Where the program `name` that belongs with the running one is.
    public static func path(_ name: String) -> String {
        let directory = Files.directory(of: runningExecutable())
        let candidates = [directory + "/" + name, directory + "/../libexec/lifeline/" + name]
        return candidates.first { access($0, X_OK) == 0 } ?? candidates[0]
    }

    /// Replaces this process with the program `name`, run with `arguments`
    /// (argv[0] first). The pid stays, so systemd and the session bus keep
    /// watching the process they started.
    public static func exec(_ name: String, _ arguments: [String]) -> Never {
        let target = path(name)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        execv(target, &argv)
        let reason = errno
        if reason == ENOENT, let build = buildFolder(of: Files.directory(of: runningExecutable())) {
            // `swift run lifeline …` in a fresh checkout builds the front binary
            // alone: `swift run` builds the program asked for, then runs it in
            // this process's place.
            let run = ["swift", "run", "--package-path", build.package, "--configuration", build.configuration, name]
                + arguments.dropFirst()
            var runArgv: [UnsafeMutablePointer<CChar>?] = run.map { strdup($0) } + [nil]
            execvp("swift", &runArgv)
        }
        var message = "lifeline: cannot run \(target): \(String(cString: strerror(reason)))\n"
        message.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
        exit(1)
    }

    /// The package and configuration of a SwiftPM build folder
    /// (`<package>/.build/<triple>/<configuration>`, or `<package>/.build/<configuration>`);
    /// nil for any other folder (an installed system).
    static func buildFolder(of directory: String) -> (package: String, configuration: String)? {
        let parts = directory.split(separator: "/", omittingEmptySubsequences: false)
        guard let build = parts.lastIndex(of: ".build"), build > 0, let configuration = parts.last.map(String.init),
              ["debug", "release"].contains(configuration) else { return nil }
        let package = parts[..<build].joined(separator: "/")
        guard access(package + "/Package.swift", F_OK) == 0 else { return nil }
        return (package, configuration)
    }

    private static func runningExecutable() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return CommandLine.arguments[0] }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
