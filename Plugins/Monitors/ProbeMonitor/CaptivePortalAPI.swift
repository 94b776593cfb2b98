import LifelineCore
import LifelineNet
import Logging
import Synchronization

/// Asks the captive-portal API (RFC 8908) that the network announced on the
/// path (the link monitor puts the announcement on it), and says what it
/// answered: `captive: true` is published as `portal` at once, without
/// waiting for a probe or the debounce window (the network's own word is no
/// flap); otherwise the probe is asked at once and decides
/// whether the internet answers, its verdict carrying the API's answer
/// (`annotate`).
///
/// Asked when the announcement comes or changes, again when the answer's
/// `seconds-remaining` is half gone and when it runs out, at once on a check
/// request (the user opened the sign-in page, or asked), and after every
/// probe that got through while the API says `captive: true`. Never more
/// than once per `spacing`, however often a network changes its
/// announcement: a URL that changes every second costs one request every
/// two seconds. Only `https://`, its certificate validated, its answer read
/// to 64 KiB at most.
final class CaptivePortalAPI: Sendable {
    struct Settings: Sendable {
        var timeout: Duration
        var interface: String
        var caFile: String?
        var spacing = Duration.seconds(2)
        /// The spacing for a request a check asked for (the user opened the
        /// sign-in page): short, so signing in is seen at once even right
        /// after another request; the requests still come one at a time.
        var askedSpacing = Duration.milliseconds(250)
        /// After a failed request, the next one waits this long.
        var retry = Duration.seconds(30)
    }

    private struct Known {
        /// The path's announcement with the API's last answer; nil when none.
        var portal: CaptivePortal?
        /// Why the last request told nothing, or what it refused ("" when nothing).
        var problem = ""
    }

    /// The probe's last verdict as it found it (before `annotate`), the path
    /// it was measured on and when: a check that got through while the API
    /// still said `captive: true`.
    private struct Checked {
        var observation: Observation
        var path: LinkPath
        var at: ContinuousClock.Instant
    }

    private let checked = Mutex<Checked?>(nil)
    /// How long a check that got through speaks for the path once the API
    /// says the user has signed in.
    static let checkedFresh = Duration.seconds(5)

    private let known = Mutex(Known())
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    /// A check asked for the next request (`refetch(asked: true)`).
    private let askedFor = Mutex(false)
    let settings: Settings
    let logger: Logger

    init(settings: Settings, logger: Logger) {
        self.settings = settings
        self.logger = logger
        (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// What the probe's verdicts carry now.
    var portal: CaptivePortal? { known.withLock { $0.portal } }

    /// Ask again now, or as soon as `spacing` allows (`askedSpacing` when a
    /// check asked for it: the user opened the sign-in page, or asked).
    func refetch(asked: Bool = false) {
        if asked { askedFor.withLock { $0 = true } }
        wake.yield()
    }

    /// The probe's verdict with what the API said: its answer rides along.
    /// While the API says the user must sign in, the state is `portal`
    /// whatever the check found: a check that got no answer is the portal's
    /// doing (it lets nothing through), and one that got through went to a
    /// host the portal lets through before sign-in (guest networks do that
    /// for well-known check servers). The API is then asked again (at most
    /// once per `spacing`): the user may have signed in some other way.
    func annotate(_ observation: inout Observation, measuredOn path: LinkPath) {
        checked.withLock { $0 = Checked(observation: observation, path: path, at: .now) }
        guard let portal else { return }
        observation.captivePortal = portal
        guard portal.saysCaptive, observation.state == .limited || observation.state == .online else { return }
        if observation.state == .online { refetch() }
        observation.state = .portal
        observation.reason = Self.reason(portal)
        observation.diagnosis = .portal
    }

    static func reason(_ portal: CaptivePortal) -> String {
        let host = portal.userPortalURL.map { url in
            String(url.dropFirst("https://".count).prefix { $0 != "/" && $0 != "?" && $0 != "#" })
        }
        return "the network's captive-portal API says to sign in" + (host.map { " at \($0)" } ?? "")
    }

    enum Event: Sendable {
        case path(LinkPath)
        case wake
        case due(UInt64)
    }

    /// Runs until cancelled. `probe` asks the probe for a round now.
    func run(handle: MonitorHandle, paths: AsyncStream<LinkPath>, clock: any Clock<Duration>,
             fetch: @escaping @Sendable (HTTPRequest) async -> Result<HTTPReply, HTTPFailure>,
             probe: @escaping @Sendable () -> Void) async {
        let (events, push) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let time = TimeSource(clock)
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await path in paths { push.yield(.path(path)) }
                push.finish()
            }
            group.addTask { [wakes] in
                for await _ in wakes { push.yield(.wake) }
            }
            group.addTask {
                var path = LinkPath()
                var lastAsked: Moment?
                var timer: (token: UInt64, task: Task<Void, Never>)?
                var token: UInt64 = 0
                func schedule(after delay: Duration) {
                    timer?.task.cancel()
                    token &+= 1
                    let mine = token
                    let due = time.now().advanced(by: delay)
                    timer = (mine, Task {
                        do { try await time.sleep(due) } catch { return }
                        push.yield(.due(mine))
                    })
                }
                defer { timer?.task.cancel() }
                for await event in events {
                    switch event {
                    case .path(let next):
                        let announcementChanged = next.captivePortal?.api != path.captivePortal?.api
                            || next.captivePortal?.source != path.captivePortal?.source || next.interface != path.interface
                        path = next
                        guard announcementChanged else { continue }
                        let had = self.known.withLock { k in
                            defer { k = Known(portal: next.captivePortal) }
                            return k.portal
                        }
                        if next.captivePortal == nil {
                            timer?.task.cancel()
                            // The portal's word is gone with its announcement: the probe alone decides.
                            if had != nil { probe() }
                            continue
                        }
                    case .wake:
                        guard path.captivePortal != nil else { continue }
                    case .due(let t):
                        guard t == timer?.token, path.captivePortal != nil else { continue }
                    }
                    // At most one request per `spacing`: the rest wait for the timer.
                    let asked = self.askedFor.withLock { $0 }
                    let spacing = asked ? self.settings.askedSpacing : self.settings.spacing
                    if let lastAsked, time.now() < lastAsked.advanced(by: spacing) {
                        schedule(after: lastAsked.advanced(by: spacing).offset - time.now().offset)
                        continue
                    }
                    self.askedFor.withLock { $0 = false }
                    lastAsked = time.now()
                    guard let next = await self.ask(on: path, handle: handle, fetch: fetch, probe: probe) else { continue }
                    schedule(after: next)
                }
            }
        }
    }

    /// Asks the API of `path`'s announcement once and acts on the answer.
    /// Returns when to ask again, nil for not before something changes.
    private func ask(on path: LinkPath, handle: MonitorHandle,
                     fetch: @Sendable (HTTPRequest) async -> Result<HTTPReply, HTTPFailure>,
                     probe: @Sendable () -> Void) async -> Duration? {
        guard let announced = path.captivePortal else { return nil }
        var request = HTTPRequest(url: announced.api, timeout: settings.timeout, interface: settings.interface)
        request.accept = "application/captive+json"
        request.httpsOnly = true
        request.caFile = settings.caFile
        struct Problem: Error { var text: String }
        let answer: Result<CaptivePortalAnswer.Read, Problem>
        switch await fetch(request) {
        case .success(let reply):
            answer = CaptivePortalAnswer.read(reply, announced: announced).mapError { Problem(text: "\($0)") }
        case .failure(let failure):
            answer = .failure(Problem(text: failure.message))
        }
        if Task.isCancelled { return nil }
        // The path moved on while the API was asked: its answer speaks for an announcement that is gone.
        guard handle.path.captivePortal?.api == announced.api else { return nil }
        switch answer {
        case .failure(let failure):
            let problem = failure.text
            logger.warning("captive-portal API \(announced.api) (\(announced.source.rawValue)): \(problem)")
            known.withLock { $0 = Known(portal: announced, problem: problem) }
            // The API tells nothing: the probe alone decides, whatever the API said before.
            probe()
            return settings.retry
        case .success(let read):
            for refusal in read.refusals { logger.warning("captive-portal API \(announced.api): \(refusal)") }
            known.withLock { $0 = Known(portal: read.portal, problem: read.refusals.joined(separator: "; ")) }
            logger.debug("captive-portal API \(announced.api): captive \(read.portal.captive == true), \(read.portal.secondsRemaining.map { "\($0) s" } ?? "no time") left")
            if read.portal.saysCaptive {
                var seen = Observation(role: .reachability, state: .portal, interface: path.interface ?? "",
                                       reason: Self.reason(read.portal))
                seen.diagnosis = .portal
                seen.captivePortal = read.portal
                handle.publishStated(seen, measuredOn: path)
                return nil
            }
            // Signed in: a check that got through moments ago (the API still
            // said captive then) is the probe's answer now, so `online` need
            // not wait for the next round, which the probe's pace may hold back.
            if let last = checked.withLock({ $0 }), last.path.generation == path.generation,
               last.observation.state == .online, last.at.duration(to: .now) <= Self.checkedFresh {
                var seen = last.observation
                annotate(&seen, measuredOn: last.path)
                handle.publish(seen, measuredOn: last.path)
            }
            probe()
            guard let seconds = read.portal.secondsRemaining else { return nil }
            // Half way, to keep the count fresh, and again when it runs out.
            let left = Duration.seconds(seconds)
            return max(settings.spacing, seconds > 120 ? left / 2 : left + .seconds(1))
        }
    }

    /// For `diagnose`: why the last request told nothing, or what it refused.
    var problem: String { known.withLock { $0.problem } }
}
