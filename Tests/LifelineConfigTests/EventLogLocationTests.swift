import LifelineCore
import LifelineDaemon
import LifelinePlatform
import Testing

/// A plugin that reads the history (the tray) is told the file the first `log`
/// sink writes, through its context; a reload that moves the log moves it too.
@Suite struct EventLogLocationTests {
    let paths = Paths.fromEnvironment(["HOME": "/home/someone"])

    func eventLog(_ text: String) throws -> String {
        try load(text: text, file: "c.toml").eventLog(paths: paths)
    }

    @Test func theFirstLogSinksFileIsTheEventLog() throws {
        let text = """
            [[sink]]
            kind = "log"
            path = "/var/tmp/someone/events.log"
            [[sink]]
            kind = "log"
            path = "/var/tmp/someone/second.log"
            [[sink]]
            kind = "tray"
            """
        #expect(try eventLog(text) == "/var/tmp/someone/events.log")
    }

    @Test func aLogSinkWithoutAPathWritesTheDefaultFile() throws {
        #expect(try eventLog("[[sink]]\nkind = \"log\"\n[[sink]]\nkind = \"tray\"\n") == paths.defaultLogFile)
    }

    @Test func withoutALogSinkReadersLookAtTheDefaultFile() throws {
        #expect(try eventLog("[[sink]]\nkind = \"tray\"\n") == paths.defaultLogFile)
    }

    @Test func aMovedLogIsWhatReadersAskForNext() {
        let location = EventLogLocation("/var/tmp/old.log")
        location.move(to: "/var/tmp/new.log")
        #expect(location.current == "/var/tmp/new.log")
    }
}
