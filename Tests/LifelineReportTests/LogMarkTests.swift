import Glibc
import LifelineCore
import LifelineFormats
import LifelinePlatform
import LifelineReport
import Testing

/// The event log's sleep, wake and stop lines: written once each from the
/// updates that carry them, stepped over by every reader of transitions, and
/// read into a timeline where the time nobody watched is neither up nor down.
@Suite struct LogMarkTests {
    func transition(_ state: ConnectivityState, _ previous: ConnectivityState, at since: Int64, _ sequence: UInt64) -> String {
        JSONText.object(StateEvent(state: state, previous: previous, since: since, reason: "r", sequence: sequence))
    }

    func folder() -> String {
        var template = Array("/tmp/lifeline-marks-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    @Test func theLastSequenceStepsOverMarksEvenIntoTheOlderFile() throws {
        let dir = folder()
        defer { _ = system("rm -rf '\(dir)'") }
        let log = dir + "/events.jsonl"
        try Files.replaceAtomically(log + ".1", with: transition(.online, .unknown, at: 1, 7) + "\n" + LogMark.sleep(at: 2).line + "\n")
        try Files.replaceAtomically(log, with: LogMark.wake(at: 3, asleepSince: 2).line + "\n" + LogMark.stop(at: 4).line + "\n")
        #expect(EventLog.lastSequence(path: log) == 7)
        try Files.replaceAtomically(log, with: transition(.offline, .online, at: 3, 8) + "\n" + LogMark.stop(at: 4).line + "\n")
        #expect(EventLog.lastSequence(path: log) == 8)

        let contents = EventLog.read(path: log)
        #expect(contents.badLines == 0)
        #expect(contents.events.map(\.sequence) == [7, 8])
        #expect(contents.marks.map(\.mark) == [.sleep(at: 2), .stop(at: 4)])
        #expect(contents.marks.map(\.before) == [1, 2])
    }

    @Test func marksReadBackAsWritten() {
        for mark in [LogMark.sleep(at: 5), .wake(at: 9, asleepSince: 5), .stop(at: 12)] {
            #expect(LogMark.parse(Array(mark.line.utf8)) == mark)
        }
        #expect(LogMark.parse(Array(#"{"mark":"wake","since":5,"asleep_since":9}"#.utf8)) == nil, "woke before it slept")
        #expect(LogMark.parse(Array(#"{"mark":"nap","since":5}"#.utf8)) == nil)
        #expect(LogMark.parse(Array(#"{"mark":"stop","since":-5}"#.utf8)) == nil)
    }

    /// A sleep and its wake that coalesced into one update (the disk was busy)
    /// are both written; what the first update shows was the predecessor's to write.
    @Test func theWriterWritesEachSleepAndTheStopOnce() {
        var writer = LogMarkWriter()
        var update = Update(event: .initial(at: 0), isTransition: false)
        #expect(writer.marks(for: update).isEmpty)
        _ = update.sleep.note(sleeping: true, at: 100)
        _ = update.sleep.note(sleeping: false, at: 250)
        #expect(writer.marks(for: update) == [.sleep(at: 100), .wake(at: 250, asleepSince: 100)])
        #expect(writer.marks(for: update).isEmpty)
        _ = update.sleep.note(sleeping: true, at: 300)
        #expect(writer.marks(for: update) == [.sleep(at: 300)])
        _ = update.sleep.note(sleeping: false, at: 400)
        update.stoppingAt = 500
        #expect(writer.marks(for: update) == [.wake(at: 400, asleepSince: 300), .stop(at: 500)])
        #expect(writer.marks(for: update).isEmpty)
    }

    /// Asleep and stopped are neither up nor down; a wake without its sleep line
    /// still counts its sleep; a start without a stop line before it (a killed
    /// daemon) lets the state last logged run on.
    @Test func theTimelineSetsTheUnwatchedTimeApart() {
        func event(_ state: ConnectivityState, _ previous: ConnectivityState, _ at: Int64) -> StateEvent {
            var e = StateEvent(state: state, previous: previous, since: at, sequence: 1)
            e.diagnosis = state == .online ? .none : .dns
            return e
        }
        let events = [event(.online, .unknown, 0), event(.limited, .online, 100), event(.online, .limited, 300),
                      event(.online, .unknown, 700), event(.offline, .online, 800), event(.online, .unknown, 900)]
        let marks: [(before: Int, mark: LogMark)] = [(2, .sleep(at: 200)), (2, .wake(at: 250, asleepSince: 200)),
                                                     (3, .wake(at: 380, asleepSince: 350)), (3, .stop(at: 400))]
        let timeline = Timeline(events: events, marks: marks, now: 1000)
        #expect(timeline.segments.map { [$0.start, $0.end] } == [[0, 100], [100, 200], [200, 250], [250, 300], [300, 350], [350, 380], [380, 400], [400, 700], [700, 800], [800, 900], [900, 1000]])
        #expect(timeline.segments.map(\.activity) == [.up, .down(.limited), .asleep, .down(.limited), .up, .asleep, .up, .notRunning, .up, .down(.offline), .up])
        let tally = timeline.tally(0..<1000)
        #expect(tally.up == 370 && tally.down == 250 && tally.asleep == 80 && tally.notRunning == 300)
        let rows = OutageRow.rows(timeline, window: 0..<1000)
        #expect(rows.map { [$0.start, $0.end] } == [[100, 200], [250, 300], [800, 900]])
        #expect(rows.map(\.ending) == [.asleep, .online, .online])
        #expect(rows.map(\.cause) == [.dns, .dns, .dns])
        // Cut to a window that starts inside the first outage.
        #expect(OutageRow.rows(timeline, window: 150..<1000).first.map { [$0.start, $0.end] } == [150, 200])
    }
}
