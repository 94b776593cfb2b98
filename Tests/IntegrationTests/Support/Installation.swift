import Foundation
import LifelineTestKit
import Testing

/// Lifeline as a user gets it: `make install` into a temporary folder (from the
/// binaries the tests run, so no release build is needed), or the `.deb` that
/// `make deb` built, unpacked into a fresh root.
final class Installation: @unchecked Sendable {
    static let repo = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The folder holding the `lifeline` and `lifeline-cli` the tests run.
    static var builtBinaries: String { URL(fileURLWithPath: Harness.binary).deletingLastPathComponent().path }

    /// A temporary folder with a random tag; removed with this object.
    let folder: String

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lifeline-install-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    func path(_ relative: String) -> String { folder + "/" + relative }

    /// `make TARGET VAR=value…` in the repository, as a user would type it.
    @discardableResult
    static func make(_ target: String, _ variables: [String: String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let assignments = variables.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return try Harness.run(["make", "--no-print-directory", "-C", repo, target] + assignments)
    }

    /// `make install` of the tests' binaries: `prefix` is where the files claim
    /// to live (unit and D-Bus files name `prefix`/bin/lifeline), `destdir` a staging root.
    /// The GIO module goes below `prefix` too (`gioModuleFolder`), never into
    /// this machine's GIO module folder.
    func makeInstall(prefix: String, destdir: String = "") throws -> (status: Int32, stdout: String, stderr: String) {
        try Self.make("install", ["NO_BUILD": "1", "BUILD_DIR": Self.builtBinaries, "PREFIX": prefix, "DESTDIR": destdir,
                                  "GIO_MODULE_DIR": Self.gioModuleFolder(prefix: prefix)])
    }

    static func gioModuleFolder(prefix: String) -> String { prefix + "/lib/gio/modules" }

    /// Every path `make install` writes, from the one list it uses.
    static func manifest(prefix: String) throws -> [String] {
        var env = ProcessInfo.processInfo.environment
        env["PREFIX"] = prefix
        env["GIO_MODULE_DIR"] = gioModuleFolder(prefix: prefix)
        let r = try Harness.run([repo + "/scripts/install.sh", "list"], environment: env)
        return r.stdout.split(separator: "\n").map(String.init)
    }

    /// Files and symbolic links below `root` (not folders), relative to it.
    static func files(under root: String) -> [String] {
        guard let walk = FileManager.default.enumerator(atPath: root) else { return [] }
        var out: [String] = []
        while let next = walk.nextObject() as? String {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + next, isDirectory: &isFolder), isFolder.boolValue { continue }
            out.append(next)
        }
        return out.sorted()
    }

    /// Folders below `root`, relative to it.
    static func folders(under root: String) -> [String] {
        guard let walk = FileManager.default.enumerator(atPath: root) else { return [] }
        var out: [String] = []
        while let next = walk.nextObject() as? String {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + next, isDirectory: &isFolder), isFolder.boolValue { out.append(next) }
        }
        return out.sorted()
    }

    /// The package `make deb` left for the tests (`make test` builds it first),
    /// or the one `LIFELINE_DEB` names.
    static func builtPackage() -> String? {
        if let explicit = ProcessInfo.processInfo.environment["LIFELINE_DEB"] { return explicit }
        let folder = repo + "/.build/deb"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasPrefix("lifeline_") && $0.hasSuffix(".deb") }.sorted().last.map { folder + "/" + $0 }
    }

    /// An environment with no daemon to find: private, empty XDG folders, a
    /// session bus address where nothing listens, no display.
    func lonelyEnvironment() throws -> [String: String] {
        for sub in ["config", "state", "run"] {
            try FileManager.default.createDirectory(atPath: path("home/" + sub), withIntermediateDirectories: true)
        }
        chmod(path("home/run"), 0o700)
        var env = ProcessInfo.processInfo.environment
        env["HOME"] = path("home")
        env["XDG_CONFIG_HOME"] = path("home/config")
        env["XDG_STATE_HOME"] = path("home/state")
        env["XDG_RUNTIME_DIR"] = path("home/run")
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + path("home/no-bus")
        env["DISPLAY"] = nil
        env["WAYLAND_DISPLAY"] = nil
        return env
    }
}

/// A private session bus configured as a desktop's is, with activation: its
/// `<servicedir>` is where `make install` put the D-Bus service file. The bus
/// hands its own environment to what it activates.
final class ActivatingBus: @unchecked Sendable {
    let address: String
    private let process: Spawned

    init(serviceFolder: String, folder: String, environment: [String: String]) throws {
        let socket = folder + "/bus"
        address = "unix:path=" + socket
        let config = PrivateBus.sessionConfiguration(listen: address, serviceFolder: serviceFolder)
        let configPath = folder + "/bus.conf"
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        var env = environment
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        process = try Spawned(["dbus-daemon", "--config-file=\(configPath)", "--nofork", "--nopidfile"], environment: env)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while !FileManager.default.fileExists(atPath: socket), clock.now < deadline {
            Thread.sleep(forTimeInterval: 0.005)
        }
        if !FileManager.default.fileExists(atPath: socket) { Issue.record("dbus-daemon did not create \(socket)") }
    }

    deinit { process.kill() }
}
