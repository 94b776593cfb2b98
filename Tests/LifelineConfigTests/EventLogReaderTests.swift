import LifelineDaemon
import Testing
import TraySink

/// The tray reads the history from the file the `log` sink writes, unless it names one itself.
@Suite struct EventLogReaderTests {
    func trayLog(_ text: String) throws -> String? {
        let config = try load(text: text, file: "c.toml")
        let tray = try #require(config.sinks.lazy.compactMap { $0.config as? TraySink.Config }.first)
        return tray.log
    }

    @Test func aTrayWithoutALogReadsTheLogSinksFile() throws {
        let text = """
            [[sink]]
            kind = "log"
            path = "/var/tmp/someone/events.log"
            [[sink]]
            kind = "tray"
            """
        #expect(try trayLog(text) == "/var/tmp/someone/events.log")
    }

    @Test func aTrayNamingItsLogKeepsIt() throws {
        let text = """
            [[sink]]
            kind = "log"
            path = "/var/tmp/someone/events.log"
            [[sink]]
            kind = "tray"
            log = "/var/tmp/someone/other.log"
            """
        #expect(try trayLog(text) == "/var/tmp/someone/other.log")
    }

    @Test func withoutALogPathTheTrayReadsTheDefaultLog() throws {
        #expect(try trayLog("[[sink]]\nkind = \"log\"\n[[sink]]\nkind = \"tray\"\n") == nil)
    }
}
