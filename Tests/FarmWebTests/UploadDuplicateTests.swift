import Testing
import FarmCore
import FarmRuntime
import FarmStore
import TestSupport
import Foundation

@Suite("ocrfarm serve: an uploaded duplicate is skipped and not kept (issue 36)", .serialized)
struct UploadDuplicateTests {
    @Test("POST /api/submit of a file already in the store: skipped, naming the document; its file and folder removed")
    func duplicate() throws {
        let folder = TemporaryDirectory("upload-duplicate")
        let path = folder.file("farm.db")
        let admin = try makeToken(path, "admin")
        let served = try Served(store: path, log: folder.file("serve.log"))
        let png = try FileSystem.read(Fixtures.packageRoot + "/Samples/pages/clean-000.png")
        let other = try FileSystem.read(Fixtures.packageRoot + "/Samples/pages/clean-001.png")
        let type = "multipart/form-data; boundary=ocrfarmtestboundary"
        let first = try served.call("/api/submit", method: "POST", token: admin, contentType: type, body: multipart([("scan.png", png)]))
        #expect(first.status == 201 && first.json?["documents"]?.arrayValue?.count == 1, "\(first.body)")
        let uploads = folder.file("uploads")
        func kept() throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: uploads).flatMap { batch in
                try FileManager.default.contentsOfDirectory(atPath: uploads + "/" + batch).map { batch + "/" + $0 }
            }.sorted()
        }
        let before = try kept()
        #expect(before.count == 1 && before[0].hasSuffix("/scan.png"), "\(before)")

        // The same content again, alone: skipped, its batch folder gone.
        let again = try served.call("/api/submit", method: "POST", token: admin, contentType: type, body: multipart([("copy.png", png)]))
        #expect(again.status == 201 && again.json?["skipped"]?[0]?["existing"]?.stringValue == "scan.png", "\(again.body)")
        #expect(try kept() == before, "no file or folder left for the duplicate")
        #expect(try FileManager.default.contentsOfDirectory(atPath: uploads).count == 1)

        // With a new file: the new one kept, the duplicate removed.
        let mixed = try served.call("/api/submit", method: "POST", token: admin, contentType: type,
                                    body: multipart([("copy2.png", png), ("new.png", other)]))
        #expect(mixed.status == 201 && mixed.json?["documents"]?.arrayValue?.count == 1 && mixed.json?["skipped"]?.arrayValue?.count == 1,
                "\(mixed.body)")
        let after = try kept()
        #expect(after.count == 2 && after.contains(before[0]) && after.contains { $0.hasSuffix("/new.png") }, "\(after)")
        #expect(try Store(path: path, readOnly: true).documentSummaries(after: nil, limit: 10).count == 2)
    }
}
