import Testing
import FarmCore
import FarmIngest
import FarmRuntime
import FarmStore
import TestSupport

@Suite("A finished file moved to the done folder, the store following it (issue 36)")
struct FinishedFileTests {
    let folder = TemporaryDirectory("finished-file")
    let store: Store
    let root: RawPath, target: RawPath

    init() throws {
        store = try Store(path: folder.file("farm.db"))
        try FileSystem.makeDirectory(folder.file("in/box"))
        try FileSystem.makeDirectory(folder.file("done"))
        root = try #require(FileSystem.canonicalPath(RawPath(folder.file("in"))))
        target = try #require(FileSystem.canonicalPath(RawPath(folder.file("done"))))
    }

    /// Submits in/box/NAME as the watcher does and returns its document.
    func submitted(_ name: String, _ bytes: [UInt8]) throws -> DocumentID {
        folder.write("in/box/" + name, bytes)
        let report = try Submission(store: store, options: SubmitOptions()).submit([Array("box/\(name)".utf8)], below: root)
        return try #require(report.added.first?.id)
    }

    @Test("the file submitted: moved, and its pages and document name it in the done folder with the same hash")
    func followed() throws {
        let document = try submitted("three.tif", try Fixtures.read("volume/three-pages.tif"))
        let before = try store.pages(of: [document])
        let outcome = try FinishedFile.move(Array("box/three.tif".utf8), from: root, to: target, document: document, store: store)
        #expect(outcome == .followed(pages: 3))
        let moved = target.appending(Array("box/three.tif".utf8))
        #expect(FileSystem.exists(moved.description) && !FileSystem.exists(root.appending(Array("box/three.tif".utf8)).description))
        for page in before {
            let source = try #require(try store.source(of: page.id))
            #expect(source.path == moved, "\(source.path)")
            let recorded = try store.recordedContent(of: document, path: moved)
            #expect(source.hash != nil && source.hash == recorded?.hash)
        }
        let documents = try store.documents(fromSource: moved).map(\.record.id)
        #expect(documents == [document])
    }

    @Test("a file changed since submit: moved as asked, and the store keeps its old path")
    func changed() throws {
        let document = try submitted("page.png", TestImages.png(width: 16, height: 16, marker: "before"))
        let old = root.appending(Array("box/page.png".utf8))
        folder.write("in/box/page.png", TestImages.png(width: 16, height: 16, marker: "after!"))  // the same size, other bytes
        let outcome = try FinishedFile.move(Array("box/page.png".utf8), from: root, to: target, document: document, store: store)
        guard case .changed(let reason) = outcome else { Issue.record("\(outcome)"); return }
        #expect(reason.contains("SHA-256"), "\(reason)")
        #expect(FileSystem.exists(target.appending(Array("box/page.png".utf8)).description))
        let page = try #require(try store.pages(of: [document]).first)
        let source = try store.source(of: page.id)
        #expect(source?.path == old)
    }

    @Test("a second file of the same name is not moved over the first one's file in the done folder")
    func sameNameLater() throws {
        let relative = Array("box/scan.png".utf8)
        let first = try submitted("scan.png", TestImages.png(width: 16, height: 16, marker: "first"))
        #expect(try FinishedFile.move(relative, from: root, to: target, document: first, store: store) == .followed(pages: 1))
        let kept = try FileSystem.read(target.appending(relative).description)
        let second = try submitted("scan.png", TestImages.png(width: 16, height: 16, marker: "second"))
        let outcome = try FinishedFile.move(relative, from: root, to: target, document: second, store: store)
        guard case .kept(let reason) = outcome else { Issue.record("\(outcome)"); return }
        #expect(reason.contains("document \(first.rawValue)"), "\(reason)")
        #expect(try FileSystem.read(target.appending(relative).description) == kept, "the first file is intact")
        #expect(FileSystem.exists(root.appending(relative).description), "the second is left where it is")
    }
}
