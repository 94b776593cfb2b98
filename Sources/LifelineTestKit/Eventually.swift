/// Polls `condition` (bounded) until it holds or `timeout` passes, and says
/// whether it held: the one way the tests wait for something to happen, never a
/// bare sleep. It polls on the real clock, so it also works while a test drives
/// the code under test with a test clock.
public func eventually(
    timeout: Duration = .seconds(5), every interval: Duration = .milliseconds(1),
    _ condition: () throws -> Bool
) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if try condition() { return true }
        try? await Task.sleep(for: interval)
    }
    return try condition()
}
