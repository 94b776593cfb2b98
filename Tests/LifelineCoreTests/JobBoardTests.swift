import LifelineCore
import Testing

/// The job board's rules: owners, bounds, display text.
@Suite struct JobBoardTests {
    func refusal<T>(_ body: () throws -> T) -> JobRefusal? {
        do {
            _ = try body()
            return nil
        } catch {
            return error as? JobRefusal
        }
    }

    @Test func onlyTheOwnerChangesOrRemovesAJob() throws {
        var board = JobBoard()
        let job = try board.add(commandLine: "git push", owner: ":1.7")
        #expect(job.state == .waiting)
        let r1 = refusal { try board.setState(.running, of: job.id, by: ":1.8") }
        #expect(r1 == JobRefusal(.notOwner, "job \(job.id) belongs to another connection"))
        let r2 = refusal { try board.remove(job.id, by: ":1.8") }
        #expect(r2 == JobRefusal(.notOwner, "job \(job.id) belongs to another connection"))
        try board.setState(.running, of: job.id, by: ":1.7")
        #expect(board.waitingCount == 0)
        #expect(board.ids(for: .retry) == [])
        #expect(board.ids(for: .cancel) == [job.id])
        try board.remove(job.id, by: ":1.7")
        #expect(board.jobs.isEmpty)
    }

    @Test func aConnectionThatLeavesTakesItsJobsWithIt() throws {
        var board = JobBoard()
        _ = try board.add(commandLine: "a", owner: ":1.1")
        let kept = try board.add(commandLine: "b", owner: ":1.2")
        _ = try board.add(commandLine: "c", owner: ":1.1")
        let removed = board.removeAll(ownedBy: ":1.1")
        #expect(removed)
        #expect(board.jobs == [kept])
    }

    @Test func jobsPerConnectionAreBounded() throws {
        var board = JobBoard()
        for i in 0..<JobBoard.maximumPerOwner { _ = try board.add(commandLine: "job \(i)", owner: ":1.1") }
        let r3 = refusal { try board.add(commandLine: "one more", owner: ":1.1") }
        #expect(r3 == JobRefusal(.tooMany, ":1.1 already has \(JobBoard.maximumPerOwner) jobs"))
        #expect(board.jobs.count == JobBoard.maximumPerOwner)
        _ = try board.add(commandLine: "another caller", owner: ":1.2")
    }

    @Test func commandLinesAreShownWithoutControlCharactersAndBounded() throws {
        var board = JobBoard()
        let job = try board.add(commandLine: "echo \u{1B}]0;pwned\u{07} done", owner: ":1.1")
        #expect(job.commandLine == "echo ^[]0;pwned^G done")
        let long = try board.add(commandLine: String(repeating: "x", count: 1000), owner: ":1.1")
        #expect(long.commandLine.count == JobBoard.maximumCommandLength)
        #expect(long.commandLine.hasSuffix("…"))
        let r4 = refusal { try board.add(commandLine: "   ", owner: ":1.1") }
        #expect(r4 == JobRefusal(.invalidArgument, "the command line is empty"))
        let r5 = refusal { try board.remove("\u{1B}[2J", by: ":1.1") }
        #expect(r5 == JobRefusal(.unknownJob, "no job '^[[2J'"))
    }
}
