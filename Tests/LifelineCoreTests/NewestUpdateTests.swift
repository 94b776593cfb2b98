import LifelineCore
import Testing

/// A sink's own slot between its mailbox and its worker (the toast's, tmux's):
/// the worker takes the newest update, and a transition that an attribute
/// change overtook is still a transition, so the toast and the alert see it.
@Suite struct NewestUpdateTests {
    func update(_ state: ConnectivityState, sequence: UInt64, transition: Bool, rtt: Double = -1) -> Update {
        Update(event: StateEvent(state: state, previous: .online, since: 0, rttMs: rtt, sequence: sequence),
               isTransition: transition)
    }

    @Test func onlyThePutIntoAnEmptySlotAsksForANudge() {
        let slot = NewestUpdate()
        #expect(slot.put(update(.offline, sequence: 1, transition: true)))
        #expect(!slot.put(update(.offline, sequence: 1, transition: false, rtt: 3)))
        #expect(slot.take() != nil)
        #expect(slot.take() == nil)
        #expect(slot.put(update(.online, sequence: 2, transition: true)))
    }

    @Test func theNewestWinsAndATransitionIsNotHidden() throws {
        let slot = NewestUpdate()
        slot.put(update(.offline, sequence: 1, transition: true))
        slot.put(update(.offline, sequence: 1, transition: false, rtt: 7))
        let taken = try #require(slot.take())
        #expect(taken.event.rttMs == 7)
        #expect(taken.isTransition)
    }
}
