import CProcess
import Glibc

/// The one way Lifeline starts a child (hooks, tmux calls, the exec monitor,
/// the config parser, `lifeline run`'s command, the tray's log opener): argv,
/// never a shell. Every child starts clean:
/// - it holds no descriptor above 2 (what the daemon holds open, including
///   what it inherited from whatever started it, stays with the daemon),
///   unless `closeOtherDescriptors` is off (`run`);
/// - no signal is blocked, and every signal has its default action, except
///   those `keepIgnored` names that were ignored when the process started
///   (`nohup`, a shell's background job: the user's choice carries through);
/// - optionally in a process group of its own, killed with the daemon
///   (`dieWithParent`), or run from an opened descriptor (`Program.descriptor`).
public struct Spawn {
    public enum Program: Sendable {
        /// A path, run as it is.
        case path(String)
        /// A bare name is looked up in PATH, as a shell would; a name with a slash runs as it is.
        case searched(String)
        /// The file this descriptor was opened on (`O_PATH` is enough): the file
        /// that was checked runs, even if its path now leads elsewhere.
        case descriptor(Int32)
    }

    public struct Failure: Error, CustomStringConvertible {
        public var program: String
        public var code: Int32
        public var description: String { "cannot run \(program): \(String(cString: strerror(code)))" }
    }

    public var program: Program
    /// argv, with argv[0].
    public var arguments: [String]
    /// nil: this process's environment.
    public var environment: [String]?
    /// Descriptors for the child's 0, 1 and 2; -1 keeps this process's own.
    public var standardInput: Int32 = -1
    public var standardOutput: Int32 = -1
    public var standardError: Int32 = -1
    /// The child heads a process group of its own, so one `kill(-pid, …)` reaches
    /// whatever it starts too.
    public var newProcessGroup = false
    /// SIGKILL to the child when the daemon dies, however it dies: a monitor
    /// program must not run on unseen. Started from `Spawn.lifelong`'s thread,
    /// since the kernel sends it when the spawning thread ends.
    public var dieWithParent = false
    /// Close every descriptor from 3 up in the child (the default). `run` keeps
    /// them: like `timeout` or `nohup`, it hands its command what the user gave
    /// it (`lifeline run -- cmd 3<input`); its own are close-on-exec.
    public var closeOtherDescriptors = true
    /// Signals that stay ignored in the child if this process ignores them.
    public var keepIgnored: sigset_t?

    public init(_ program: Program, arguments: [String], environment: [String]? = nil) {
        self.program = program
        self.arguments = arguments
        self.environment = environment
    }

    /// Starts the child and returns its pid (`start` wraps it in a `Child`).
    func startProcess() throws(Failure) -> pid_t {
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup($0) } + [nil] }
        defer {
            argv.forEach { free($0) }
            envp?.forEach { free($0) }
        }
        let (name, search, descriptor): (String, Bool, Int32) = switch program {
        case .path(let path): (path, false, -1)
        case .searched(let name): (name, true, -1)
        case .descriptor(let fd): (arguments.first ?? "fd \(fd)", false, fd)
        }
        var pid: pid_t = 0
        let rc = name.withCString { cName in
            argv.withUnsafeBufferPointer { argvBuffer in
                withEnvironment(envp) { envBuffer in
                    withOptionalSignals(keepIgnored) { keep in
                        var request = lifeline_spawn_request()
                        request.program = cName
                        request.search_path = search ? 1 : 0
                        request.exec_fd = descriptor
                        request.argv = UnsafePointer(argvBuffer.baseAddress)
                        request.envp = envBuffer
                        request.stdio = (standardInput, standardOutput, standardError)
                        request.new_process_group = newProcessGroup ? 1 : 0
                        request.die_with_parent = dieWithParent ? 1 : 0
                        request.keep_ignored = keep
                        request.keep_descriptors = closeOtherDescriptors ? 0 : 1
                        return lifeline_spawn(&request, &pid)
                    }
                }
            }
        }
        guard rc == 0 else { throw Failure(program: name, code: rc) }
        return pid
    }

    /// The signals ignored by this process now: call at start, before any handler is installed.
    public static func ignoredSignals() -> sigset_t {
        var set = sigset_t()
        lifeline_ignored_signals(&set)
        return set
    }

    /// A thread that lives as long as the process, for children that must die
    /// with it (`dieWithParent`): the parent-death signal follows the thread
    /// that started the child, and a pool or one-off thread may end first.
    public static let lifelong = SerialThread(name: "lifeline-spawn")
}

extension Spawn: @unchecked Sendable {}  // sigset_t is plain data

private func withEnvironment<R>(_ envp: [UnsafeMutablePointer<CChar>?]?, _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>?) -> R) -> R {
    guard let envp else { return body(nil) }
    return envp.withUnsafeBufferPointer { body(UnsafePointer($0.baseAddress)) }
}

private func withOptionalSignals<R>(_ set: sigset_t?, _ body: (UnsafePointer<sigset_t>?) -> R) -> R {
    guard var set else { return body(nil) }
    return withUnsafePointer(to: &set) { body($0) }
}
