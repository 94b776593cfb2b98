import LifelineCore
import LifelinePlatform
import Testing
@testable import NotifySink

/// The toast's words come from the translator; the English ones are the msgids.
@Suite struct ToastLanguageTests {
    let korean = Translator(table: [
        "Connected, but no internet": "연결됨, 인터넷 없음",
        "The network on {connection} does not reach the internet.": "{connection} 네트워크가 인터넷에 연결되지 않습니다.",
        "{interface} has no IP address": "{interface}에 IP 주소가 없습니다",
        "{count} command waiting for the network.": "명령 {count}개가 네트워크 연결을 기다리고 있습니다.",
        "Check now": "지금 확인",
        "{m}m {s}s": "{m}분 {s}초",
        "Back online via {connection} — without internet for {duration}.":
            "{connection} 연결로 다시 연결되었습니다. {duration} 동안 인터넷이 되지 않았습니다.",
        "Wi-Fi session ends in {count} min": "Wi-Fi 세션이 {count}분 후에 끝납니다",
        "The network's sign-in page can extend it.": "네트워크의 로그인 페이지에서 연장할 수 있습니다.",
        "Extend": "연장",
    ])

    func event() -> StateEvent {
        var e = StateEvent(state: .limited, previous: .online, since: 1_000_000, interface: "wlan0",
                           reason: "wlan0 has no IPv4 address", sequence: 2)
        e.diagnosis = .address
        return e
    }

    /// The sentence for the failed layer, not the English reason; the interface's
    /// name stays as the system spells it (no capital), and the plural follows the count.
    @Test func theToastInKorean() {
        let toast = ToastPolicy.toast(for: event(), korean).listing([Job(id: "1", commandLine: "git push", state: .waiting, owner: ":1.5")], korean)
        #expect(toast.summary == "연결됨, 인터넷 없음")
        #expect(toast.body == "wlan0 네트워크가 인터넷에 연결되지 않습니다. wlan0에 IP 주소가 없습니다. 명령 1개가 네트워크 연결을 기다리고 있습니다.")
        #expect(toast.labels.checkNow == "지금 확인")
        let back = ToastPolicy.backOnline(Outage(id: 1, since: 0, worst: .limited, endedAt: 133_000_000), event: event(), korean)
        #expect(back.body == "wlan0 연결로 다시 연결되었습니다. 2분 13초 동안 인터넷이 되지 않았습니다.")
    }

    @Test func theToastInEnglishIsAsItWas() {
        let toast = ToastPolicy.toast(for: event())
        #expect(toast.summary == "Connected, but no internet")
        #expect(toast.body == "The network on wlan0 does not reach the internet. Wlan0 has no IPv4 address.")
        #expect(toast.labels == Toast.Labels())
        #expect([toast.labels.checkNow, toast.labels.mute] == ["Check now", "Mute for 1 hour"])
    }

    /// The warning before a network's session ends speaks the user's language
    /// too, its "Extend" button included.
    @Test func theSessionWarningInKorean() {
        var e = StateEvent(state: .online, previous: .unknown, since: 0, interface: "wlan0", kind: .wifi, sequence: 1)
        var portal = CaptivePortal(api: "https://p.example/api", source: .ra)
        portal.captive = false
        portal.secondsRemaining = 300
        portal.canExtendSession = true
        portal.userPortalURL = "https://p.example/login"
        e.captivePortal = portal
        var warning = SessionWarning(time: .seconds(600), bytes: 0, translator: korean)
        let toast = warning.take(e, now: 0)
        #expect(toast?.summary == "Wi-Fi 세션이 5분 후에 끝납니다")
        #expect(toast?.body == "네트워크의 로그인 페이지에서 연장할 수 있습니다.")
        #expect(toast?.buttons.map(\.label) == ["연장"])
    }
}
