import Testing
@testable import FarmExport

@Suite("export's paths to page images")
struct StoreExportTests {
    @Test("a page image's path from the folder an XML file is written into")
    func relativePath() {
        #expect(StoreExport.relativePath(to: "/data/scans/a.png", from: "/data/out/doc") == "../../scans/a.png")
        #expect(StoreExport.relativePath(to: "/data/out/doc/a.png", from: "/data/out/doc") == "a.png")
        #expect(StoreExport.relativePath(to: "/a.png", from: "/data/out") == "../../a.png")
        // A component that only starts the same is not shared.
        #expect(StoreExport.relativePath(to: "/data/outside/a.png", from: "/data/out") == "../outside/a.png")
        // Unknown folder or a relative source: the source as it is.
        #expect(StoreExport.relativePath(to: "/data/a.png", from: nil) == "/data/a.png")
        #expect(StoreExport.relativePath(to: "a.png", from: "/data") == "a.png")
    }
}
