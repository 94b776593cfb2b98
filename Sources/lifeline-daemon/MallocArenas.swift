/// At most two malloc arenas for the whole daemon.
///
/// glibc gives each thread that allocates an arena of its own (up to eight per
/// core), and every arena keeps its touched pages and free lists for good. The
/// daemon's threads (GLib loops, libcurl, the Swift pool) allocate a little, now
/// and then: two arenas share those pages (0.25 MB less written memory at idle)
/// and are still two locks for the rare moment two threads allocate at once.
enum MallocArenas {
    /// Before any thread but the main one exists: arenas made earlier stay.
    static func limit() {
        _ = glibcMallopt(arenaMax, 2)
    }

    /// `M_ARENA_MAX` in glibc's <malloc.h>, which the Glibc module does not include.
    static let arenaMax: Int32 = -8
}

/// glibc's `int mallopt(int param, int value)`.
@_silgen_name("mallopt")
private func glibcMallopt(_ param: Int32, _ value: Int32) -> Int32
