import LifelineCore
import LifelineNet

extension ProbeMonitor {
    /// One HTTP check with these settings, judged as the monitor judges one, for
    /// a one-off answer without a daemon (`lifeline wait-online`, `run`). A single
    /// failure is `limited` here: there is no second probe to wait for.
    /// `interface` is the default route's, as the link monitor found it.
    public static func probeOnce(config: Config = .defaults, interface: String) async -> Observation {
        // The endpoints in turn, as a round of the monitor asks them: the
        // first that answers as expected ends it.
        var round = ProbeRound()
        for url in config.url.list {
            let request = HTTPRequest(url: url, timeout: config.timeout.duration, interface: config.interface, family: config.family)
            let expectation = ProbeExpectation(url: url, reply: config.expectedReply, timeout: config.timeout.duration)
            var facts = PathFacts()
            facts.proxy = PlainHTTPProxy.fromEnvironment().proxy(for: url)
            let outcome = expectation.judge(await HTTPProber.fetch(request), facts: facts)
            round.verdicts.append((url, outcome))
            if !ProbeRound.asksOn(after: outcome) { break }
        }
        var judge = ProbeJudge(failures: 1)
        let shown = config.interface.isEmpty ? interface : config.interface
        return judge.record(round.outcome, interface: shown, path: 0, afterStall: nil)
    }
}
