import Foundation
import Testing

/// `@Test(.requires(.root))`, `@Suite(.requires(.tools(["tmux"])))`: what a test needs
/// from the machine, checked before it runs.
///
/// Missing on a developer's machine, the test is skipped and the run says why
/// ("Test x() skipped: needs root"): never counted as passed. Under
/// `LIFELINE_REQUIRE_INTEGRATION=1` (CI) the test is not skipped: it fails with the
/// reason, without running its body, so a machine that lacks a tool cannot turn
/// the integration tests green.
struct RequiresTrait: TestTrait, SuiteTrait, TestScoping {
    let requirement: Harness.Requirement
    let sourceLocation: SourceLocation

    /// A suite's requirement is every one of its tests' requirement.
    var isRecursive: Bool { true }

    /// The skip: swift-testing's own condition trait, so the reason is reported as its comment.
    func prepare(for test: Test) async throws {
        let missing = requirement.missing()
        try await ConditionTrait.enabled(
            if: missing == nil || Harness.integrationRequired, Comment(rawValue: missing ?? ""),
            sourceLocation: sourceLocation
        ).prepare(for: test)
    }

    /// The failure under `LIFELINE_REQUIRE_INTEGRATION=1`: the issue is recorded once
    /// per test (not for the suite around it), and the body does not run.
    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        if testCase != nil, let missing = requirement.missing() {
            Issue.record(
                "integration test cannot run: \(missing) (LIFELINE_REQUIRE_INTEGRATION=1)", sourceLocation: sourceLocation)
            return
        }
        try await function()
    }
}

extension Trait where Self == RequiresTrait {
    /// Every one of `requirements` must be present for the test to run.
    static func requires(_ requirements: Harness.Requirement..., sourceLocation: SourceLocation = #_sourceLocation) -> Self {
        RequiresTrait(requirement: .all(requirements), sourceLocation: sourceLocation)
    }
}
