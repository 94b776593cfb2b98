import LifelineCore

extension ProbeMonitor {
    /// One HTTP check with these settings, judged as the monitor judges one, for
    /// a one-off answer without a daemon (`lifeline wait-online`, `run`). A single
    /// failure is `limited` here: there is no second probe to wait for.
    /// `interface` is the default route's, as the link monitor found it.
    public static func probeOnce(config: Config = .defaults, interface: String) async -> Observation {
        let request = HTTPRequest(url: config.url, timeout: config.timeout.duration,
                                  interface: config.interface, family: config.family)
        let expectation = ProbeExpectation(url: config.url, status: config.expectStatus, bodyPrefix: config.expectBodyPrefix,
                                           header: config.expectHeader, timeout: config.timeout.duration)
        var judge = ProbeJudge(failures: 1)
        let outcome = expectation.judge(await HTTPProber.fetch(request))
        let shown = config.interface.isEmpty ? interface : config.interface
        return judge.record(outcome, interface: shown, path: 0, afterStall: nil)
    }
}
