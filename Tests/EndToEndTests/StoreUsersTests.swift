import Testing
import FarmCore
import FarmRuntime
import TestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Two users and one store: the coordinator's user owns it, an operator reads it.
@Suite("A store and its users (end to end)")
struct StoreUsersTests {
    /// Runs ocrfarm as `user` (setpriv drops root's ids and groups; Debian's nobody is in nogroup).
    func ocrfarm(as user: String, _ arguments: [String]) throws -> ProcessOutput {
        let group = user == "nobody" ? "nogroup" : user
        return try Run.process(try #require(Run.which("setpriv")),
                        ["--reuid=\(user)", "--regid=\(group)", "--clear-groups", "--", Fixtures.binary] + arguments,
                        environment: ["OMP_THREAD_LIMIT": "1", "HOME": "/tmp"])
    }

    @Test("status by another user leaves no -shm behind, so the owner can still write the store",
          .enabled(if: Capabilities.isRoot, "runs commands as the users daemon and nobody: needs root"))
    func operatorReadsOwnersStore() throws {
        let folder = TemporaryDirectory("store-users")
        chmod(folder.path, 0o777)
        let store = folder.file("farm.db")
        let pages = try TestImages.tinyPages(2, in: folder)
        let submitted = try ocrfarm(as: "daemon", ["submit", "--store", store, pages])
        #expect(submitted.status == 0, "\(submitted.stderr)")
        #expect(!FileSystem.exists(store + "-shm"), "the owner's process closed the store")

        let status = try ocrfarm(as: "nobody", ["status", "--store", store])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.text.contains("2 documents, 2 pages"), "\(status.text)")
        #expect(!FileSystem.exists(store + "-shm"), "a -shm made by nobody would be nobody's, and daemon could not write it")

        let more = try TestImages.tinyPages(1, in: folder, prefix: "more")
        let again = try ocrfarm(as: "daemon", ["submit", "--store", store, more])
        #expect(again.status == 0, "the owner writes the store after the operator's status: \(again.stderr)")
    }
}
