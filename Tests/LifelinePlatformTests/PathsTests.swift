import Glibc
import LifelinePlatform
import Testing

/// Where Lifeline keeps its files when the XDG variables say nothing.
@Suite struct PathsTests {
    @Test func theXDGVariablesDecide() {
        let paths = Paths.fromEnvironment([
            "HOME": "/home/ada", "XDG_CONFIG_HOME": "/c", "XDG_STATE_HOME": "/s", "XDG_RUNTIME_DIR": "/run/user/1000",
            "TMPDIR": "/elsewhere",
        ])
        #expect(paths.configFile == "/c/lifeline/config.toml")
        #expect(paths.defaultLogFile == "/s/lifeline/events.jsonl")
        #expect(paths.stateFile == "/run/user/1000/lifeline/state.json")
    }

    @Test func withoutThemTheHomeAndATemporaryFolderOfTheUserAreUsed() {
        let paths = Paths.fromEnvironment(["HOME": "/home/ada"])
        #expect(paths.configFile == "/home/ada/.config/lifeline/config.toml")
        #expect(paths.defaultLogFile == "/home/ada/.local/state/lifeline/events.jsonl")
        #expect(paths.stateFile == "/tmp/lifeline-\(getuid())/lifeline/state.json")
    }

    /// A user (or a test) that sets `TMPDIR` keeps the fallback runtime folder there.
    @Test func theFallbackRuntimeFolderFollowsTMPDIR() {
        #expect(Paths.fromEnvironment(["TMPDIR": "/var/tmp/ada/"]).runtimeDir == "/var/tmp/ada/lifeline-\(getuid())")
        #expect(Paths.fromEnvironment(["TMPDIR": "relative"]).runtimeDir == "/tmp/lifeline-\(getuid())")
    }

    @Test func relativeOrEmptyValuesAreIgnored() {
        let paths = Paths.fromEnvironment(["HOME": "/home/ada", "XDG_CONFIG_HOME": "config", "XDG_RUNTIME_DIR": ""])
        #expect(paths.configFile == "/home/ada/.config/lifeline/config.toml")
        #expect(paths.runtimeDir == "/tmp/lifeline-\(getuid())")
    }
}
