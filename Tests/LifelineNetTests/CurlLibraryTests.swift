import Testing

@testable import LifelineNet

/// The loader's answers when the library is not what the probe needs: each
/// names the library and what failed, and nothing crashes.
@Suite struct CurlLibraryTests {
    @Test func aLibraryThatIsNotThereIsNamed() {
        let error = CurlLibrary.check(soname: "libcurl-lifeline-absent.so.4")
        #expect(error == "libcurl-lifeline-absent.so.4: cannot open shared object file: No such file or directory")
    }

    @Test func aLibraryWithoutCurlsFunctionsNamesTheFirstMissingOne() {
        let error = CurlLibrary.check(soname: "libz.so.1") ?? ""
        #expect(error.hasPrefix("libz.so.1 has no function curl_global_init: "), "\(error)")
    }

    @Test func aFileThatIsNoLibraryIsNamed() {
        let error = CurlLibrary.check(soname: "/dev/null") ?? ""
        #expect(error == "/dev/null: file too short", "\(error)")
    }

    /// The machine's libcurl has every function the probe calls; loading it
    /// for the process succeeds, and again at once.
    @Test func libcurlHasEverythingTheProbeCalls() throws {
        #expect(CurlLibrary.check(soname: "libcurl-gnutls.so.4") == nil)
        try CurlLibrary.load()
        try CurlLibrary.load()
    }
}
